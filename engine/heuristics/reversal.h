// Manhattan distance plus Kunkle's direct tile-reversal penalty: two
// adjacent tiles each sitting on the other's goal cell cannot pass each
// other in a line, so one must step aside: two more moves per such pair.
// Pairs are disjoint, so the penalty never exceeds linear conflict's and
// stays admissible.
#ifndef NPUZZLE_ENGINE_HEURISTICS_REVERSAL_H_
#define NPUZZLE_ENGINE_HEURISTICS_REVERSAL_H_

#include <array>
#include <cstdint>

#include "engine/heuristics/manhattan.h"
#include "engine/puzzle.h"

namespace npuzzle {

class Reversal {
 public:
  struct Node {
    int manhattan = 0;
    int pairs = 0;
  };

  explicit Reversal(const Puzzle& puzzle) : puzzle_(&puzzle), manhattan_(puzzle) {
    for (int c = 0; c < puzzle.cells(); ++c) {
      for (int d = 0; d < kNumDirs; ++d) {
        const int n = puzzle.Neighbor(c, static_cast<Dir>(d));
        if (n >= 0) adjacent_[c] |= uint64_t{1} << n;
      }
    }
  }

  Node Start(const Tiles& s) const {
    Node n{manhattan_.Start(s), 0};
    for (int t = 1; t < puzzle_->cells(); ++t) {
      const int partner = s.at[puzzle_->GoalCell(t)];
      if (t < partner && InPair(s, t, s.pos[t], -1)) ++n.pairs;
    }
    return n;
  }

  Node Move(const Tiles& s, const Node& n, int tile, int from, int to) const {
    return {manhattan_.Move(s, n.manhattan, tile, from, to),
            n.pairs - InPair(s, tile, from, -1) + InPair(s, tile, to, from)};
  }

  static int Value(const Node& n) { return n.manhattan + 2 * n.pairs; }

 private:
  // Whether `tile`, standing on `cell`, is reversed with the tile on its
  // goal cell; `vacated` is a cell to read as blank (-1 for none).
  bool InPair(const Tiles& s, int tile, int cell, int vacated) const {
    const int goal = puzzle_->GoalCell(tile);
    if (goal == vacated || !((adjacent_[cell] >> goal) & 1)) return false;
    const int other = s.at[goal];
    return other != 0 && puzzle_->GoalCell(other) == cell;
  }

  const Puzzle* puzzle_;
  Manhattan manhattan_;
  std::array<uint64_t, kMaxCells> adjacent_{};
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTICS_REVERSAL_H_
