// Heuristic properties against exhaustive BFS distances: admissible (never
// above the true distance), consistent (drops by at most one per move), and
// the incremental update always equal to evaluating from scratch.
#include <random>

#include "engine/goals.h"
#include "engine/heuristics/linear_conflict.h"
#include "engine/heuristics/manhattan.h"
#include "engine/heuristics/misplaced.h"
#include "engine/heuristics/reversal.h"
#include "engine/heuristics/zero.h"
#include "engine/instances.h"
#include "gtest/gtest.h"
#include "tests/util/exhaustive.h"

namespace npuzzle {
namespace {

using testing::ExhaustiveDistances;

template <class H>
class HeuristicTest : public ::testing::Test {};

using AllHeuristics = ::testing::Types<ZeroHeuristic, Misplaced, Manhattan, LinearConflict, Reversal>;
TYPED_TEST_SUITE(HeuristicTest, AllHeuristics);

std::vector<Board> GoalsFor(int rows, int cols, std::mt19937_64& rng) {
  return {*GoalPreset("standard", rows, cols), *GoalPreset("snail", rows, cols),
          testing::RandomArrangement(rows, cols, rng)};
}

TYPED_TEST(HeuristicTest, AdmissibleAndConsistentOnEveryReachableBoard) {
  std::mt19937_64 rng(7);
  for (auto [rows, cols] : {std::pair{3, 3}, {2, 4}, {2, 5}, {4, 2}}) {
    for (const Board& goal : GoalsFor(rows, cols, rng)) {
      const ExhaustiveDistances oracle(goal);
      const Puzzle puzzle(goal);
      const TypeParam h(puzzle);
      EXPECT_EQ(TypeParam::Value(h.Start(puzzle.goal_tiles())), 0);
      int checked = 0;
      oracle.ForEachBoard([&](const std::vector<int>& tiles, int distance) {
        if (distance < 0) return;
        Tiles s = Puzzle::ToTiles(*Board::Create(rows, cols, tiles));
        const int value = TypeParam::Value(h.Start(s));
        ASSERT_LE(value, distance) << Board::Create(rows, cols, tiles)->ToString();
        for (int d = 0; d < kNumDirs; ++d) {
          const int to = puzzle.Neighbor(s.blank(), static_cast<Dir>(d));
          if (to < 0) continue;
          Tiles child = s;
          child.MoveBlank(to);
          ASSERT_LE(value, 1 + TypeParam::Value(h.Start(child)))
              << "inconsistent at " << Board::Create(rows, cols, tiles)->ToString();
        }
        ++checked;
      });
      EXPECT_EQ(checked, oracle.reachable());
    }
  }
}

TYPED_TEST(HeuristicTest, IncrementalUpdateEqualsFromScratch) {
  std::mt19937_64 rng(11);
  for (auto [rows, cols] : {std::pair{3, 3}, {4, 4}, {5, 5}, {3, 7}, {2, 8}, {8, 8}, {6, 4}}) {
    for (const Board& goal : GoalsFor(rows, cols, rng)) {
      const Puzzle puzzle(goal);
      const TypeParam h(puzzle);
      Tiles s = Puzzle::ToTiles(RandomSolvableBoard(goal, rng));
      typename TypeParam::Node node = h.Start(s);
      for (int step = 0; step < 3000; ++step) {
        int to;
        do {
          to = puzzle.Neighbor(s.blank(), static_cast<Dir>(rng() % kNumDirs));
        } while (to < 0);
        node = h.Move(s, node, s.at[to], to, s.blank());
        s.MoveBlank(to);
        ASSERT_EQ(TypeParam::Value(node), TypeParam::Value(h.Start(s))) << rows << "x" << cols << " step " << step;
      }
    }
  }
}

TEST(LinearConflict, CountsTheMinimumTilesToRemove) {
  const Board goal = *GoalPreset("standard", 3, 3);
  const Puzzle puzzle(goal);
  const LinearConflict lc(puzzle);
  // Row 0 holds 3 2 1: two of the three must leave (one increasing tile
  // stays), so 2 conflicts on top of Manhattan 4 + 0 + 4... = 8.
  const Tiles reversed = Puzzle::ToTiles(*Board::Create(3, 3, {3, 2, 1, 4, 5, 6, 7, 8, 0}));
  EXPECT_EQ(Manhattan(puzzle).Start(reversed), 4);
  EXPECT_EQ(LinearConflict::Value(lc.Start(reversed)), 4 + 2 * 2);
  // 2 1 3 in row 0 and 4 7 in column 0 (goal column order 4, 7 is fine).
  const Tiles swap = Puzzle::ToTiles(*Board::Create(3, 3, {2, 1, 3, 4, 5, 6, 7, 8, 0}));
  EXPECT_EQ(LinearConflict::Value(lc.Start(swap)), 2 + 2);
}

TEST(Reversal, PenalisesAdjacentSwappedPairsOnce) {
  const Puzzle puzzle(*GoalPreset("standard", 3, 3));
  const Reversal reversal(puzzle);
  const Tiles swap = Puzzle::ToTiles(*Board::Create(3, 3, {2, 1, 3, 4, 5, 6, 7, 8, 0}));
  EXPECT_EQ(Reversal::Value(reversal.Start(swap)), 2 + 2);
  // 3 2 1: 1 and 3 are swapped but not adjacent, so no penalty.
  const Tiles far = Puzzle::ToTiles(*Board::Create(3, 3, {3, 2, 1, 4, 5, 6, 7, 8, 0}));
  EXPECT_EQ(Reversal::Value(reversal.Start(far)), 4);
}

}  // namespace
}  // namespace npuzzle
