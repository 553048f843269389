// Manhattan distance plus linear conflicts. Among the tiles that sit in
// their goal row, those whose goal columns are out of order must leave the
// row and come back: at least (count - longest increasing run) of them, two
// extra vertical moves each. The same holds for columns with horizontal
// moves, so rows and columns add up and the sum stays admissible (and
// consistent: one move changes it by at most one in the downward
// direction). Per-line counts ride in the Node, so a move recomputes only
// the two lines the moving tile leaves and enters.
#ifndef NPUZZLE_ENGINE_HEURISTICS_LINEAR_CONFLICT_H_
#define NPUZZLE_ENGINE_HEURISTICS_LINEAR_CONFLICT_H_

#include <array>
#include <cstdint>

#include "engine/heuristics/manhattan.h"
#include "engine/puzzle.h"

namespace npuzzle {

class LinearConflict {
 public:
  struct Node {
    int16_t manhattan = 0;
    int16_t conflicts = 0;
    std::array<uint8_t, 2 * kMaxSide> line{};  // rows, then columns
  };

  explicit LinearConflict(const Puzzle& puzzle)
      : puzzle_(&puzzle), manhattan_(puzzle) {}

  Node Start(const Tiles& s) const {
    Node n;
    n.manhattan = static_cast<int16_t>(manhattan_.Start(s));
    for (int r = 0; r < puzzle_->rows(); ++r) {
      n.line[r] = static_cast<uint8_t>(Conflicts(s, /*is_row=*/true, r, -1, -1, -1));
      n.conflicts += n.line[r];
    }
    for (int c = 0; c < puzzle_->cols(); ++c) {
      n.line[kMaxSide + c] = static_cast<uint8_t>(Conflicts(s, false, c, -1, -1, -1));
      n.conflicts += n.line[kMaxSide + c];
    }
    return n;
  }

  Node Move(const Tiles& s, const Node& n, int tile, int from, int to) const {
    Node m = n;
    m.manhattan = static_cast<int16_t>(manhattan_.Move(s, n.manhattan, tile, from, to));
    // A vertical slide keeps the tile's column order; only rows change.
    const bool vertical = puzzle_->Row(from) != puzzle_->Row(to);
    const int a = vertical ? puzzle_->Row(from) : puzzle_->Col(from);
    const int b = vertical ? puzzle_->Row(to) : puzzle_->Col(to);
    const int base = vertical ? 0 : kMaxSide;
    for (int index : {a, b}) {
      const int now = Conflicts(s, vertical, index, tile, from, to);
      m.conflicts = static_cast<int16_t>(m.conflicts + now - m.line[base + index]);
      m.line[base + index] = static_cast<uint8_t>(now);
    }
    return m;
  }

  static int Value(const Node& n) { return n.manhattan + 2 * n.conflicts; }

 private:
  // Conflicts in one row or column of `s` as it is after `tile` slides from
  // `from` to `to` (pass -1s to read `s` as it is).
  int Conflicts(const Tiles& s, bool is_row, int index, int tile, int from,
                int to) const {
    const int cols = puzzle_->cols();
    const int length = is_row ? cols : puzzle_->rows();
    std::array<int, kMaxSide> tails;  // patience piles for the longest run
    int piles = 0, members = 0;
    for (int i = 0; i < length; ++i) {
      const int cell = is_row ? index * cols + i : i * cols + index;
      const int t = cell == to ? tile : cell == from ? 0 : s.at[cell];
      if (t == 0) continue;
      const int goal = puzzle_->GoalCell(t);
      if ((is_row ? puzzle_->Row(goal) : puzzle_->Col(goal)) != index) continue;
      const int key = is_row ? puzzle_->Col(goal) : puzzle_->Row(goal);
      ++members;
      int p = 0;
      while (p < piles && tails[p] < key) ++p;
      tails[p] = key;
      if (p == piles) ++piles;
    }
    return members - piles;
  }

  const Puzzle* puzzle_;
  Manhattan manhattan_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTICS_LINEAR_CONFLICT_H_
