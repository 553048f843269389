#include "engine/moves.h"

#include <utility>

#include "absl/strings/string_view.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"

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
      case 'U': case 'u': moves.push_back(Dir::kUp); break;
      case 'D': case 'd': moves.push_back(Dir::kDown); break;
      case 'L': case 'l': moves.push_back(Dir::kLeft); break;
      case 'R': case 'r': moves.push_back(Dir::kRight); break;
      case ' ': case ',': break;
      default:
        return absl::InvalidArgumentError(
            absl::StrFormat("unknown move '%c' (moves are U, D, L, R)", c));
    }
  }
  return moves;
}

int NeighborCell(int rows, int cols, int cell, Dir d) {
  const int r = cell / cols, c = cell % cols;
  switch (d) {
    case Dir::kUp: return r > 0 ? cell - cols : -1;
    case Dir::kDown: return r + 1 < rows ? cell + cols : -1;
    case Dir::kLeft: return c > 0 ? cell - 1 : -1;
    case Dir::kRight: return c + 1 < cols ? cell + 1 : -1;
  }
  return -1;
}

namespace {

// Replays `moves`, calling on_step(tile) for each tile that slides.
template <class OnStep>
absl::StatusOr<Board> Replay(const Board& board, const std::vector<Dir>& moves,
                             OnStep on_step) {
  std::vector<int> tiles(board.tiles().begin(), board.tiles().end());
  int blank = board.blank();
  for (size_t i = 0; i < moves.size(); ++i) {
    const int to = NeighborCell(board.rows(), board.cols(), blank, moves[i]);
    if (to < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "move %d (%c) takes the blank off the board", i + 1,
          DirLetter(moves[i])));
    }
    on_step(tiles[to]);
    std::swap(tiles[blank], tiles[to]);
    blank = to;
  }
  return Board::Create(board.rows(), board.cols(), std::move(tiles));
}

}  // namespace

absl::StatusOr<Board> ApplyMoves(const Board& board,
                                 const std::vector<Dir>& moves) {
  return Replay(board, moves, [](int) {});
}

absl::StatusOr<std::vector<int>> TilesMoved(const Board& board,
                                            const std::vector<Dir>& moves) {
  std::vector<int> tiles;
  absl::StatusOr<Board> end =
      Replay(board, moves, [&](int tile) { tiles.push_back(tile); });
  if (!end.ok()) return end.status();
  return tiles;
}

}  // namespace npuzzle
