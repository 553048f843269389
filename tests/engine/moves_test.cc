#include "engine/moves.h"

#include "engine/board_parser.h"
#include "engine/puzzle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

TEST(Moves, KunklesExampleReplaysToTheGoal) {
  // Kunkle 2001: 1 3 4 / 8 0 5 / 7 2 6 to the snail goal by D R U U L D.
  const Board start = *ParseBoard("134 8b5 726");
  const std::vector<Dir> moves = *ParseMoves("DRUULD");
  EXPECT_EQ(ApplyMoves(start, moves)->ToString(), "1 2 3 / 8 0 4 / 7 6 5");
  EXPECT_EQ(*TilesMoved(start, moves), (std::vector<int>{2, 6, 5, 4, 3, 2}));
  EXPECT_EQ(MovesToString(moves), "DRUULD");
}

TEST(Moves, OppositeAndLetters) {
  EXPECT_EQ(Opposite(Dir::kUp), Dir::kDown);
  EXPECT_EQ(Opposite(Dir::kLeft), Dir::kRight);
  EXPECT_EQ(DirLetter(Dir::kRight), 'R');
  EXPECT_EQ(MovesToString(*ParseMoves("u, d l r")), "UDLR");
}

TEST(Moves, Errors) {
  EXPECT_THAT(ParseMoves("UDX").status().message(), ::testing::HasSubstr("unknown move 'X'"));
  const Board start = *ParseBoard("0 1 2 3 4 5 6 7 8");
  EXPECT_THAT(ApplyMoves(start, *ParseMoves("RU")).status().message(),
              ::testing::HasSubstr("move 2 (U) takes the blank off the board"));
}

}  // namespace
}  // namespace npuzzle
