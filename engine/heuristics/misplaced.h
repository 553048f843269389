// Misplaced tiles (Hamming distance): how many tiles are off their goal
// cell. Admissible and consistent: a move fixes at most one tile.
#ifndef NPUZZLE_ENGINE_HEURISTICS_MISPLACED_H_
#define NPUZZLE_ENGINE_HEURISTICS_MISPLACED_H_

#include "engine/puzzle.h"

namespace npuzzle {

class Misplaced {
 public:
  using Node = int;
  static constexpr bool kReadsTiles = false;
  explicit Misplaced(const Puzzle& puzzle) : puzzle_(&puzzle) {}

  Node Start(const Tiles& s) const {
    int h = 0;
    for (int t = 1; t < puzzle_->cells(); ++t) h += s.pos[t] != puzzle_->GoalCell(t);
    return h;
  }
  Node Move(const Tiles&, Node h, int tile, int from, int to) const {
    const int goal = puzzle_->GoalCell(tile);
    return h + (to != goal) - (from != goal);
  }
  static int Value(Node h) { return h; }

 private:
  const Puzzle* puzzle_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTICS_MISPLACED_H_
