#include "engine/goals.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

TEST(GoalPreset, Standard) {
  EXPECT_EQ(GoalPreset("standard", 3, 3)->ToString(), "1 2 3 / 4 5 6 / 7 8 0");
  EXPECT_EQ(GoalPreset("standard", 2, 3)->ToString(), "1 2 3 / 4 5 0");
}

TEST(GoalPreset, BlankFirst) { EXPECT_EQ(GoalPreset("blank-first", 3, 3)->ToString(), "0 1 2 / 3 4 5 / 6 7 8"); }

TEST(GoalPreset, SnailSpiralsClockwiseInwards) {
  EXPECT_EQ(GoalPreset("snail", 3, 3)->ToString(), "1 2 3 / 8 0 4 / 7 6 5");
  EXPECT_EQ(GoalPreset("snail", 4, 4)->ToString(), "1 2 3 4 / 12 13 14 5 / 11 0 15 6 / 10 9 8 7");
  EXPECT_EQ(GoalPreset("snail", 2, 4)->ToString(), "1 2 3 4 / 0 7 6 5");
  EXPECT_EQ(GoalPreset("snail", 4, 2)->ToString(), "1 2 / 0 3 / 7 4 / 6 5");
}

TEST(GoalPreset, EveryPresetIsAValidBoardForEveryShape) {
  for (const std::string& name : GoalPresetNames()) {
    for (int r = kMinSide; r <= kMaxSide; ++r) {
      for (int c = kMinSide; c <= kMaxSide; ++c) {
        EXPECT_TRUE(GoalPreset(name, r, c).ok()) << name << " " << r << "x" << c;
      }
    }
  }
}

TEST(GoalPreset, Errors) {
  EXPECT_THAT(GoalPreset("spiral", 3, 3).status().message(),
              ::testing::HasSubstr("unknown goal preset 'spiral' (known: standard, blank-first, snail)"));
  EXPECT_THAT(GoalPreset("standard", 17, 3).status().message(),
              ::testing::HasSubstr("board size 17x3 is out of range"));
}

}  // namespace
}  // namespace npuzzle
