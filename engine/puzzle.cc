#include "engine/puzzle.h"

namespace npuzzle {

Puzzle::Puzzle(const Board& goal)
    : rows_(goal.rows()),
      cols_(goal.cols()),
      cells_(goal.cells()),
      goal_(goal),
      goal_tiles_(ToTiles(goal)) {
  for (int cell = 0; cell < cells_; ++cell) {
    for (int d = 0; d < kNumDirs; ++d) {
      neighbor_[cell][d] = static_cast<int8_t>(
          NeighborCell(rows_, cols_, cell, static_cast<Dir>(d)));
    }
  }
}

Tiles Puzzle::ToTiles(const Board& board) {
  Tiles t;
  for (int c = 0; c < board.cells(); ++c) {
    t.at[c] = static_cast<uint8_t>(board.at(c));
    t.pos[board.at(c)] = static_cast<uint8_t>(c);
  }
  return t;
}

}  // namespace npuzzle
