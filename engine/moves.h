// The blank's four moves (U, D, L, R: the direction the blank travels, as in
// Kunkle's paper), their letters, and where they take the blank.
#ifndef NPUZZLE_ENGINE_MOVES_H_
#define NPUZZLE_ENGINE_MOVES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npuzzle {

// Opposite directions differ only in the lowest bit.
enum class Dir : uint8_t { kUp = 0, kDown = 1, kLeft = 2, kRight = 3 };
inline constexpr int kNumDirs = 4;

inline Dir Opposite(Dir d) { return static_cast<Dir>(static_cast<uint8_t>(d) ^ 1); }
char DirLetter(Dir d);

std::string MovesToString(const std::vector<Dir>& moves);
// Accepts U, D, L, R in either case; spaces and commas are ignored.
absl::StatusOr<std::vector<Dir>> ParseMoves(absl::string_view text);

// The cell the blank reaches from `cell` moving `d`, or -1 off the board.
int NeighborCell(int rows, int cols, int cell, Dir d);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_MOVES_H_
