#include "engine/puzzle.h"

namespace npuzzle {

Puzzle::Puzzle(const Board& goal)
    : rows_(goal.rows()),
      cols_(goal.cols()),
      cells_(goal.cells()),
      goal_(goal),
      goal_tiles_(ToTiles(goal)) {
  for (int cell = 0; cell < cells_; ++cell) {
    row_[cell] = static_cast<uint8_t>(cell / cols_);
    col_[cell] = static_cast<uint8_t>(cell % cols_);
    for (int d = 0; d < kNumDirs; ++d) {
      neighbor_[cell][d] = static_cast<int8_t>(
          NeighborCell(rows_, cols_, cell, static_cast<Dir>(d)));
    }
    for (int entry = 0; entry <= kNumDirs; ++entry) {
      MoveList& list = successors_[cell][entry];
      for (int d = 0; d < kNumDirs; ++d) {
        const Dir dir = static_cast<Dir>(d);
        const bool undoes = entry != kNoMove && dir == Opposite(static_cast<Dir>(entry));
        if (neighbor_[cell][d] >= 0 && !undoes) {
          list.steps[list.count++] = {static_cast<uint8_t>(neighbor_[cell][d]), dir};
        }
      }
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
