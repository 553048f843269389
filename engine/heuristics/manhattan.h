// Manhattan distance: the sum over tiles of rows plus columns to their goal
// cells. Admissible and consistent; updated in O(1) per move.
#ifndef NPUZZLE_ENGINE_HEURISTICS_MANHATTAN_H_
#define NPUZZLE_ENGINE_HEURISTICS_MANHATTAN_H_

#include <array>
#include <cstdint>
#include <cstdlib>

#include "engine/puzzle.h"

namespace npuzzle {

class Manhattan {
 public:
  using Node = int;
  static constexpr bool kReadsTiles = false;

  explicit Manhattan(const Puzzle& puzzle) : cells_(puzzle.cells()) {
    for (int t = 1; t < cells_; ++t) {
      const int goal = puzzle.GoalCell(t);
      for (int c = 0; c < cells_; ++c) {
        distance_[t][c] = static_cast<uint8_t>(std::abs(puzzle.Row(c) - puzzle.Row(goal)) +
                                               std::abs(puzzle.Col(c) - puzzle.Col(goal)));
      }
    }
  }

  Node Start(const Tiles& s) const {
    int h = 0;
    for (int t = 1; t < cells_; ++t) h += distance_[t][s.pos[t]];
    return h;
  }
  Node Move(const Tiles&, Node h, int tile, int from, int to) const {
    return h + distance_[tile][to] - distance_[tile][from];
  }
  static int Value(Node h) { return h; }

  int Distance(int tile, int cell) const { return distance_[tile][cell]; }

 private:
  int cells_;
  std::array<std::array<uint8_t, kMaxCells>, kMaxCells> distance_{};
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTICS_MANHATTAN_H_
