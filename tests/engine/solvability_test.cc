#include "engine/solvability.h"

#include <random>
#include <tuple>

#include "engine/goals.h"
#include "gtest/gtest.h"
#include "tests/util/exhaustive.h"

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

// The oracle itself, against published figures: half of all arrangements
// are reachable, and the farthest board from a goal with the blank in a
// corner is 6, 21, 36 and 31 moves away on 2x2, 2x3, 2x4 and 3x3.
TEST(ExhaustiveDistances, MatchesPublishedFigures) {
  for (auto [rows, cols, diameter] : {std::tuple{2, 2, 6}, {2, 3, 21}, {3, 2, 21}, {2, 4, 36}, {3, 3, 31}}) {
    const ExhaustiveDistances oracle(*GoalPreset("standard", rows, cols));
    int arrangements = 1;
    for (int n = 2; n <= rows * cols; ++n) arrangements *= n;
    EXPECT_EQ(oracle.reachable(), arrangements / 2) << rows << "x" << cols;
    EXPECT_EQ(oracle.diameter(), diameter) << rows << "x" << cols;
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
