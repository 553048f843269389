// Test oracle: exact distances from every board of a small shape to one
// goal, by breadth-first search over the whole state space. It shares no
// code with the engine's searches: boards are ranked as permutations into a
// flat table and moved with plain swaps.
#ifndef NPUZZLE_TESTS_UTIL_EXHAUSTIVE_H_
#define NPUZZLE_TESTS_UTIL_EXHAUSTIVE_H_

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "engine/board.h"

namespace npuzzle::testing {

class ExhaustiveDistances {
 public:
  static constexpr int kUnreachable = -1;

  // Up to 10 cells (3,628,800 boards).
  explicit ExhaustiveDistances(const Board& goal);

  // Moves from `board` to the goal, or kUnreachable.
  int Distance(const Board& board) const;
  int Distance(const std::vector<int>& tiles) const;
  int reachable() const { return reachable_; }
  int diameter() const { return diameter_; }

  // Calls visit(tiles, distance) for every arrangement of this shape,
  // reachable or not (distance kUnreachable).
  void ForEachBoard(const std::function<void(const std::vector<int>&, int)>& visit) const;

 private:
  uint32_t Rank(const std::vector<int>& tiles) const;
  std::vector<int> Unrank(uint32_t rank) const;

  int cells_;
  std::vector<int8_t> distance_;
  int reachable_ = 0;
  int diameter_ = 0;
};

// A board drawn uniformly from all arrangements of this shape (solvable or
// not), and a uniformly random goal.
Board RandomArrangement(int rows, int cols, std::mt19937_64& rng);

}  // namespace npuzzle::testing

#endif  // NPUZZLE_TESTS_UTIL_EXHAUSTIVE_H_
