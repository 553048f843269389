#include "engine/instances.h"

#include <utility>
#include <vector>

#include "engine/puzzle.h"
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
  const Puzzle puzzle(goal);
  return puzzle.ToBoard(puzzle.RandomWalk(moves, rng));
}

}  // namespace npuzzle
