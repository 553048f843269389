#include "engine/solvability.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"

namespace npuzzle {

absl::Status CheckSameShape(const Board& start, const Board& goal) {
  if (start.rows() != goal.rows() || start.cols() != goal.cols()) {
    return absl::InvalidArgumentError(
        absl::StrCat("start is ", start.Dimensions(), " but goal is ", goal.Dimensions()));
  }
  return absl::OkStatus();
}

bool IsSolvable(const Board& start, const Board& goal) {
  const int cells = start.cells();
  std::vector<int> goal_cell(cells);
  for (int c = 0; c < cells; ++c) goal_cell[goal.at(c)] = c;

  // Parity of a permutation is (elements - cycles) mod 2.
  std::vector<bool> seen(cells, false);
  int cycles = 0;
  for (int c = 0; c < cells; ++c) {
    if (seen[c]) continue;
    ++cycles;
    for (int x = c; !seen[x]; x = goal_cell[start.at(x)]) seen[x] = true;
  }
  const int permutation_parity = (cells - cycles) % 2;

  const int from = start.blank(), to = goal.blank();
  const int cols = start.cols();
  const int blank_distance = std::abs(from / cols - to / cols) + std::abs(from % cols - to % cols);
  return permutation_parity == blank_distance % 2;
}

}  // namespace npuzzle
