// Grid: the sliding-tile domain for boards of any shape up to 16x16, as
// the anytime solver (engine/anytime/) sees it. The classic searches use
// Puzzle, whose fixed 64-cell states are what their speed rests on; the
// anytime solver's boards run to 256 cells, so it has its own state
// (GridState, a cell and a position array of 256 bytes each) and its own
// goal-relative distances. Everything here is exact and cheap to copy;
// nothing is shared between threads but const data.
#ifndef NPUZZLE_ENGINE_ANYTIME_GRID_H_
#define NPUZZLE_ENGINE_ANYTIME_GRID_H_

#include <array>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/board.h"
#include "engine/moves.h"

namespace npuzzle {

inline constexpr int kMaxGridSide = 16;
inline constexpr int kMaxGridCells = kMaxGridSide * kMaxGridSide;

// Tile t sits on cell pos[t]; cell c holds tile at[c]; the blank is tile 0.
// Only the first `cells` entries mean anything.
struct GridState {
  std::array<uint8_t, kMaxGridCells> at;
  std::array<uint8_t, kMaxGridCells> pos;

  int blank() const { return pos[0]; }
  // The blank moves to `to`; the tile there slides into the blank's cell.
  void MoveBlank(int to) {
    const int from = pos[0];
    const int tile = at[to];
    at[from] = static_cast<uint8_t>(tile);
    pos[tile] = static_cast<uint8_t>(from);
    at[to] = 0;
    pos[0] = static_cast<uint8_t>(to);
  }
};

class Grid {
 public:
  Grid(int rows, int cols);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int cells() const { return rows_ * cols_; }
  int Row(int cell) const { return cell / cols_; }
  int Col(int cell) const { return cell % cols_; }
  // Where the blank goes from `cell` moving `d`, or -1 off the board.
  int Neighbor(int cell, Dir d) const { return neighbor_[cell][static_cast<int>(d)]; }
  int Distance(int a, int b) const { return std::abs(Row(a) - Row(b)) + std::abs(Col(a) - Col(b)); }

  GridState StateOf(const Board& board) const;
  bool Same(const GridState& a, const GridState& b) const;

  // Plays `moves` from `s` in place; false (with `s` partly moved) if one
  // takes the blank off the board.
  bool Play(GridState& s, const std::vector<Dir>& moves) const;

 private:
  int rows_, cols_;
  std::vector<std::array<int16_t, kNumDirs>> neighbor_;
};

// A state's hash: the XOR of a fixed random word for each (tile, cell).
uint64_t ZobristHash(const Grid& grid, const GridState& s);
// XORed into a state's hash, makes it the hash after the blank moves from
// `blank` to `to`, where `tile` was.
uint64_t ZobristMove(int tile, int blank, int to);

// Manhattan distance plus linear conflicts to a fixed target, for boards up
// to 16x16, kept per line so a move recounts only the lines it touches
// (the same argument as engine/heuristics/linear_conflict.h: admissible
// and consistent). Also the cheap part alone (Manhattan), for searches that
// want speed over strength.
class GridHeuristic {
 public:
  struct Value {
    int manhattan = 0;
    int conflicts = 0;  // extra moves: twice the tiles that must leave a line
    int total() const { return manhattan + conflicts; }
  };

  GridHeuristic(const Grid& grid, const GridState& target);

  int Manhattan(int tile, int cell) const { return grid_->Distance(cell, target_.pos[tile]); }

  // From scratch, with the per-line conflict counts into `lines` (2 x
  // kMaxGridSide entries: rows, then columns).
  Value Evaluate(const GridState& s, uint8_t* lines) const;
  // The value after the blank of `s` moves to `to`, where `s` and `lines`
  // are before the move; `lines` is updated.
  Value Move(const GridState& s, Value v, uint8_t* lines, int to) const;

 private:
  int CountLine(const GridState& s, int index, int moved_tile, int from, int to) const;

  const Grid* grid_;
  GridState target_;
  // For each line and tile: the tile's place along the line if the line is
  // its target row (or column), else -1.
  std::vector<std::array<int8_t, kMaxGridCells>> home_key_;
  std::vector<std::vector<uint8_t>> line_cells_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ANYTIME_GRID_H_
