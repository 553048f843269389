// Puzzle: the state space of one board shape and goal. It owns the move
// geometry and the goal lookups that searches and heuristics share, and the
// Tiles working state they move around in.
#ifndef NPUZZLE_ENGINE_PUZZLE_H_
#define NPUZZLE_ENGINE_PUZZLE_H_

#include <array>
#include <cstdint>
#include <cstring>

#include "engine/board.h"
#include "engine/moves.h"

namespace npuzzle {

// A mutable arrangement kept two ways: which tile sits in each cell, and
// which cell holds each tile (the blank is tile 0). Only the first
// cells() entries of each array mean anything; the rest are left
// uninitialised because searches build one of these per expansion.
struct Tiles {
  std::array<uint8_t, kMaxCells> at;
  std::array<uint8_t, kMaxCells> pos;

  int blank() const { return pos[0]; }

  // The blank moves to `to`; the tile there slides into the old blank cell.
  void MoveBlank(int to) {
    const int from = pos[0];
    const int tile = at[to];
    at[from] = static_cast<uint8_t>(tile);
    pos[tile] = static_cast<uint8_t>(from);
    at[to] = 0;
    pos[0] = static_cast<uint8_t>(to);
  }

  bool SameCells(const Tiles& other, int cells) const {
    return std::memcmp(at.data(), other.at.data(), cells) == 0;
  }
};

// The blank's legal moves from one cell, excluding the move that would undo
// how it got there; in U, D, L, R order.
struct MoveList {
  struct Step {
    uint8_t to;  // the cell the blank moves to
    Dir dir;
  };
  uint8_t count = 0;
  std::array<Step, kNumDirs> steps{};
};

// Stands for "no previous move" where a move that undoes the entry is
// asked for (the start of a search).
inline constexpr uint8_t kNoMove = kNumDirs;

class Puzzle {
 public:
  explicit Puzzle(const Board& goal);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int cells() const { return cells_; }
  const Board& goal() const { return goal_; }
  const Tiles& goal_tiles() const { return goal_tiles_; }
  int GoalCell(int tile) const { return goal_tiles_.pos[tile]; }
  // Tables, not division: heuristics ask these in their inner loops.
  int Row(int cell) const { return row_[cell]; }
  int Col(int cell) const { return col_[cell]; }

  // Where the blank goes from `cell` moving `d`, or -1 off the board.
  int Neighbor(int cell, Dir d) const {
    return neighbor_[cell][static_cast<int>(d)];
  }
  // Legal moves of a blank on `cell` that entered by `entry` (a Dir, or
  // kNoMove); the move back the way it came is left out.
  const MoveList& Successors(int cell, uint8_t entry) const {
    return successors_[cell][entry];
  }

  static Tiles ToTiles(const Board& board);
  bool IsGoal(const Tiles& t) const { return t.SameCells(goal_tiles_, cells_); }

 private:
  int rows_, cols_, cells_;
  Board goal_;
  Tiles goal_tiles_;
  std::array<uint8_t, kMaxCells> row_{};
  std::array<uint8_t, kMaxCells> col_{};
  std::array<std::array<int8_t, kNumDirs>, kMaxCells> neighbor_{};
  std::array<std::array<MoveList, kNumDirs + 1>, kMaxCells> successors_{};
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PUZZLE_H_
