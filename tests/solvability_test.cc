#include "engine/solvability.h"

#include <random>

#include "engine/goals.h"
#include "gtest/gtest.h"
#include "tests/exhaustive.h"

namespace npuzzle {
namespace {

using testing::ExhaustiveDistances;

// The parity rule agrees with reachability on every arrangement of small
// boards, for preset goals and random ones.
TEST(IsSolvable, AgreesWithExhaustiveSearch) {
  std::mt19937_64 rng(2024);
  for (auto [rows, cols] : {std::pair{2, 2}, {2, 3}, {3, 2}, {2, 4}, {3, 3}}) {
    std::vector<Board> goals;
    for (const std::string& preset : GoalPresetNames()) goals.push_back(*GoalPreset(preset, rows, cols));
    for (int i = 0; i < 3; ++i) goals.push_back(testing::RandomArrangement(rows, cols, rng));
    for (const Board& goal : goals) {
      const ExhaustiveDistances oracle(goal);
      int solvable = 0;
      oracle.ForEachBoard([&](const std::vector<int>& tiles, int distance) {
        const Board start = *Board::Create(rows, cols, tiles);
        const bool reachable = distance != ExhaustiveDistances::kUnreachable;
        ASSERT_EQ(IsSolvable(start, goal), reachable) << start.ToString() << " -> " << goal.ToString();
        solvable += reachable;
      });
      EXPECT_EQ(solvable, oracle.reachable());
    }
  }
}

TEST(IsSolvable, EvenWidthBoards) {
  const Board goal = *GoalPreset("standard", 4, 4);
  // Sam Loyd's 14-15 puzzle.
  const Board loyd = *Board::Create(4, 4, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 14, 0});
  EXPECT_FALSE(IsSolvable(loyd, goal));
  const Board moved = *Board::Create(4, 4, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 13, 14, 15, 12});
  EXPECT_TRUE(IsSolvable(moved, goal));
}

TEST(CheckSameShape, NamesBothShapes) {
  const Board a = *GoalPreset("standard", 3, 3);
  const Board b = *GoalPreset("standard", 2, 4);
  EXPECT_EQ(CheckSameShape(a, b).message(), "start is 3x3 but goal is 2x4");
}

}  // namespace
}  // namespace npuzzle
