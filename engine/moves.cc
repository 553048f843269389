#include "engine/moves.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace npuzzle {

char DirLetter(Dir d) { return "UDLR"[static_cast<int>(d)]; }

std::string MovesToString(const std::vector<Dir>& moves) {
  std::string out;
  out.reserve(moves.size());
  for (Dir d : moves) out += DirLetter(d);
  return out;
}

absl::StatusOr<std::vector<Dir>> ParseMoves(absl::string_view text) {
  std::vector<Dir> moves;
  for (char c : text) {
    switch (c) {
      case 'U':
      case 'u':
        moves.push_back(Dir::kUp);
        break;
      case 'D':
      case 'd':
        moves.push_back(Dir::kDown);
        break;
      case 'L':
      case 'l':
        moves.push_back(Dir::kLeft);
        break;
      case 'R':
      case 'r':
        moves.push_back(Dir::kRight);
        break;
      case ' ':
      case ',':
        break;
      default:
        return absl::InvalidArgumentError(absl::StrFormat("unknown move '%c' (moves are U, D, L, R)", c));
    }
  }
  return moves;
}

int NeighborCell(int rows, int cols, int cell, Dir d) {
  const int r = cell / cols, c = cell % cols;
  switch (d) {
    case Dir::kUp:
      return r > 0 ? cell - cols : -1;
    case Dir::kDown:
      return r + 1 < rows ? cell + cols : -1;
    case Dir::kLeft:
      return c > 0 ? cell - 1 : -1;
    case Dir::kRight:
      return c + 1 < cols ? cell + 1 : -1;
  }
  return -1;
}

}  // namespace npuzzle
