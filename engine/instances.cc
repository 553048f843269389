#include "engine/instances.h"

#include <utility>
#include <vector>

#include "engine/moves.h"
#include "engine/solvability.h"

namespace npuzzle {

Board RandomSolvableBoard(const Board& goal, std::mt19937_64& rng) {
  std::vector<int> tiles(goal.tiles().begin(), goal.tiles().end());
  for (size_t i = tiles.size() - 1; i > 0; --i) {
    std::swap(tiles[i], tiles[rng() % (i + 1)]);
  }
  Board board = *Board::Create(goal.rows(), goal.cols(), tiles);
  if (IsSolvable(board, goal)) return board;
  // Swapping two tiles flips the permutation parity and nothing else, which
  // pairs unsolvable boards one-to-one with solvable ones.
  int a = 0;
  while (tiles[a] == 0) ++a;
  int b = a + 1;
  while (tiles[b] == 0) ++b;
  std::swap(tiles[a], tiles[b]);
  return *Board::Create(goal.rows(), goal.cols(), std::move(tiles));
}

Board RandomWalk(const Board& goal, int moves, std::mt19937_64& rng) {
  // Any board size: the walk is on the board's own tiles.
  std::vector<int> at(goal.tiles().begin(), goal.tiles().end());
  int blank = goal.blank();
  int entry = -1;  // never undo the previous move
  for (int i = 0; i < moves; ++i) {
    std::vector<std::pair<int, int>> options;
    for (int d = 0; d < kNumDirs; ++d) {
      const int to = NeighborCell(goal.rows(), goal.cols(), blank, static_cast<Dir>(d));
      if (to >= 0 && (entry < 0 || d != (entry ^ 1))) options.emplace_back(d, to);
    }
    const auto [dir, to] = options[rng() % options.size()];
    std::swap(at[blank], at[to]);
    blank = to;
    entry = dir;
  }
  return *Board::Create(goal.rows(), goal.cols(), std::move(at));
}

}  // namespace npuzzle
