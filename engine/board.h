// Board: one arrangement of a rows x cols sliding-tile puzzle, row-major,
// with 0 for the blank. The value type the rest of the engine speaks.
#ifndef NPUZZLE_ENGINE_BOARD_H_
#define NPUZZLE_ENGINE_BOARD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npuzzle {

inline constexpr int kMinSide = 2;
// The largest side the classic searches take (their states are fixed
// 64-cell arrays: engine/puzzle.h).
inline constexpr int kMaxSide = 8;
inline constexpr int kMaxCells = kMaxSide * kMaxSide;
// The largest side any part of npuzzle takes, and so the largest a Board
// may have (the anytime solver: engine/anytime/).
inline constexpr int kMaxBoardSide = 16;

class Board {
 public:
  Board() = default;

  // Checks the shape and that the tiles are exactly 0 .. rows*cols-1; the
  // error names the first problem found.
  static absl::StatusOr<Board> Create(int rows, int cols, std::vector<int> tiles);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int cells() const { return rows_ * cols_; }
  int at(int cell) const { return tiles_[cell]; }
  int at(int row, int col) const { return tiles_[row * cols_ + col]; }
  const std::vector<uint8_t>& tiles() const { return tiles_; }
  int blank() const;
  std::string Dimensions() const;  // "3x3"

  // "1 2 3 / 4 5 6 / 7 8 0": one line, readable back by ParseBoard.
  std::string ToString() const;
  // Aligned rows, one per line, with "." for the blank.
  std::string ToGrid() const;

  friend bool operator==(const Board&, const Board&) = default;

 private:
  Board(int rows, int cols, std::vector<uint8_t> tiles) : rows_(rows), cols_(cols), tiles_(std::move(tiles)) {}

  int rows_ = 0;
  int cols_ = 0;
  std::vector<uint8_t> tiles_;
};

// OK when 2 <= rows, cols <= 16; otherwise an error naming the size.
absl::Status CheckDimensions(int rows, int cols);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_BOARD_H_
