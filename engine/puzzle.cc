#include "engine/puzzle.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace npuzzle {

Puzzle::Puzzle(const Board& goal)
    : rows_(goal.rows()), cols_(goal.cols()), cells_(goal.cells()), goal_(goal), goal_tiles_(ToTiles(goal)) {
  for (int cell = 0; cell < cells_; ++cell) {
    row_[cell] = static_cast<uint8_t>(cell / cols_);
    col_[cell] = static_cast<uint8_t>(cell % cols_);
    for (int d = 0; d < kNumDirs; ++d) {
      neighbor_[cell][d] = static_cast<int8_t>(NeighborCell(rows_, cols_, cell, static_cast<Dir>(d)));
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
  // Filled in a pass of its own: read straight after its byte-wise writes,
  // each list stalled on store forwarding (a fifth of a small solve's
  // set-up).
  for (int cell = 0; cell < cells_; ++cell) {
    for (int entry = 0; entry <= kNumDirs; ++entry) in_order_[cell][entry] = Expansion::Of(successors_[cell][entry], 0);
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

namespace {

// Plays `moves` on a copy of `board`'s tiles, any size of board; the tile
// that slides at each move goes to `tiles_moved` when given.
absl::StatusOr<std::vector<int>> Played(const Board& board, const std::vector<Dir>& moves,
                                        std::vector<int>* tiles_moved) {
  std::vector<int> at(board.tiles().begin(), board.tiles().end());
  int blank = board.blank();
  for (size_t i = 0; i < moves.size(); ++i) {
    const int to = NeighborCell(board.rows(), board.cols(), blank, moves[i]);
    if (to < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("move %d (%c) takes the blank off the board", i + 1, DirLetter(moves[i])));
    }
    if (tiles_moved != nullptr) tiles_moved->push_back(at[to]);
    std::swap(at[blank], at[to]);
    blank = to;
  }
  return at;
}

}  // namespace

absl::StatusOr<Board> ApplyMoves(const Board& board, const std::vector<Dir>& moves) {
  absl::StatusOr<std::vector<int>> at = Played(board, moves, nullptr);
  if (!at.ok()) return at.status();
  return Board::Create(board.rows(), board.cols(), *std::move(at));
}

absl::StatusOr<std::vector<int>> TilesMoved(const Board& board, const std::vector<Dir>& moves) {
  std::vector<int> tiles;
  absl::StatusOr<std::vector<int>> at = Played(board, moves, &tiles);
  if (!at.ok()) return at.status();
  return tiles;
}

}  // namespace npuzzle
