#include "engine/goals.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace npuzzle {
namespace {

// Cells in clockwise spiral order from the top-left corner.
std::vector<int> SpiralOrder(int rows, int cols) {
  std::vector<int> order;
  int top = 0, bottom = rows - 1, left = 0, right = cols - 1;
  while (top <= bottom && left <= right) {
    for (int c = left; c <= right; ++c) order.push_back(top * cols + c);
    for (int r = top + 1; r <= bottom; ++r) order.push_back(r * cols + right);
    if (top < bottom) {
      for (int c = right - 1; c >= left; --c) order.push_back(bottom * cols + c);
    }
    if (left < right) {
      for (int r = bottom - 1; r > top; --r) order.push_back(r * cols + left);
    }
    ++top, --bottom, ++left, --right;
  }
  return order;
}

}  // namespace

std::vector<std::string> GoalPresetNames() { return {"standard", "blank-first", "snail"}; }

absl::StatusOr<Board> GoalPreset(absl::string_view name, int rows, int cols) {
  if (absl::Status s = CheckDimensions(rows, cols); !s.ok()) return s;
  const int cells = rows * cols;
  std::vector<int> tiles(cells);
  if (name == "standard") {
    for (int i = 0; i < cells - 1; ++i) tiles[i] = i + 1;
    tiles[cells - 1] = 0;
  } else if (name == "blank-first") {
    for (int i = 0; i < cells; ++i) tiles[i] = i;
  } else if (name == "snail") {
    const std::vector<int> order = SpiralOrder(rows, cols);
    for (int i = 0; i < cells; ++i) tiles[order[i]] = (i + 1) % cells;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown goal preset '", name, "' (known: ", absl::StrJoin(GoalPresetNames(), ", "), ")"));
  }
  return Board::Create(rows, cols, std::move(tiles));
}

}  // namespace npuzzle
