#include "engine/board_parser.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;

std::string Error(absl::string_view text, int rows = 0, int cols = 0) {
  absl::StatusOr<Board> b = ParseBoard(text, rows, cols);
  EXPECT_FALSE(b.ok()) << "parsed '" << text << "' as " << b->ToString();
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(b.status().message());
}

TEST(ParseBoard, ReadsEveryAcceptedForm) {
  const Board expected = *Board::Create(3, 3, {8, 1, 3, 4, 0, 2, 7, 6, 5});
  for (const char* text : {"8 1 3 4 0 2 7 6 5", "8,1,3,4,0,2,7,6,5", "8, 1, 3, 4, 0, 2, 7, 6, 5",
                           "8 1 3 / 4 0 2 / 7 6 5", "8 1 3\n4 0 2\n7 6 5\n", "813/402/765", "813 4b2 765",
                           "813 4_2 765", "813 4.2 765", "8 1 3 4 b 2 7 6 5", "  8 1 3 4 0 2 7 6 5  "}) {
    absl::StatusOr<Board> b = ParseBoard(text);
    ASSERT_TRUE(b.ok()) << text << ": " << b.status();
    EXPECT_EQ(*b, expected) << text;
  }
}

TEST(ParseBoard, KunklesCharacterRows) {
  absl::StatusOr<Board> b = ParseBoard("134 8b5 726");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->ToString(), "1 3 4 / 8 0 5 / 7 2 6");
}

TEST(ParseBoard, ShapeFromFlagsRowsOrSquareCount) {
  EXPECT_EQ(ParseBoard("1 2 3 4 5 0", 2, 3)->Dimensions(), "2x3");
  EXPECT_EQ(ParseBoard("1 2 3 4 5 0", 3, 2)->Dimensions(), "3x2");
  EXPECT_EQ(ParseBoard("1 2 3 4 5 0", 2, 0)->Dimensions(), "2x3");
  EXPECT_EQ(ParseBoard("1 2 3 4 5 0", 0, 2)->Dimensions(), "3x2");
  EXPECT_EQ(ParseBoard("1 2 3 / 4 5 0")->Dimensions(), "2x3");
  EXPECT_EQ(ParseBoard("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 0")->Dimensions(), "4x4");
  const Board big = *ParseBoard("1 2 3 4 5 6 7 8 / 9 10 11 12 13 14 15 0");
  EXPECT_EQ(big.Dimensions(), "2x8");
}

TEST(ParseBoard, WrongCountForTheDimensions) {
  EXPECT_THAT(Error("1 2 3 4 5 6 7 8 0", 4, 4), HasSubstr("wrong number of tiles for a 4x4 board: expected 16, got 9"));
  EXPECT_THAT(Error("1 2 3 4 5 6 7 0 8 9", 3, 3), HasSubstr("expected 9, got 10"));
}

TEST(ParseBoard, UnknownShape) {
  EXPECT_THAT(Error("1 2 3 4 5 6 7 0"), HasSubstr("cannot tell the board's shape from 8 tiles"));
  EXPECT_THAT(Error("1 2 3 4 5 0 6", 2, 0), HasSubstr("7 tiles do not fill 2 rows"));
}

TEST(ParseBoard, RaggedRows) {
  EXPECT_THAT(Error("1 2 3 / 4 5 / 6 7 0"), HasSubstr("rows have different lengths: row 1 has 3 cells, row 2 has 2"));
  EXPECT_THAT(Error("1 2 3 / 4 5 6 / 7 8 0", 4, 4), HasSubstr("laid out as 3x3 but 4x4 was asked for"));
}

TEST(ParseBoard, DuplicateTile) {
  EXPECT_THAT(Error("1 2 3 4 5 5 7 8 0"), HasSubstr("duplicate tile 5 (positions 5 and 6)"));
  EXPECT_THAT(Error("1 2 3 4 0 6 7 8 0"), HasSubstr("more than one blank"));
}

TEST(ParseBoard, MissingTile) {
  EXPECT_THAT(Error("1 2 3 4 5 6 7 0", 3, 3), HasSubstr("missing tile 8"));
  EXPECT_THAT(Error("1 2 4 5 6 7 0", 3, 3), HasSubstr("missing tiles 3, 8"));
}

TEST(ParseBoard, TileOutOfRange) {
  EXPECT_THAT(Error("1 2 3 4 5 6 7 9 0"), HasSubstr("tile 9 is out of range for a 3x3 board (tiles are 1..8"));
  EXPECT_THAT(Error("1 2 3 4 5 6 7 9 0"), HasSubstr("missing tile 8"));
  EXPECT_THAT(Error("1 2 3 4 5 6 7 -8 0"), HasSubstr("tile -8 is out of range"));
}

TEST(ParseBoard, NoBlank) {
  EXPECT_THAT(Error("1 2 3 4 5 6 7 8 9"), HasSubstr("no blank"));
  EXPECT_THAT(Error("1 2 3 4"), HasSubstr("no blank"));
}

TEST(ParseBoard, UnknownToken) {
  EXPECT_THAT(Error("1 2 3 4 x 6 7 8 0"), HasSubstr("unknown token 'x' at position 5"));
  EXPECT_THAT(Error("1 2 3 4 5.5 6 7 8 0"), HasSubstr("unknown token '5.5'"));
  EXPECT_THAT(Error("134 8b5 72x"), HasSubstr("unknown token 'x'"));
}

TEST(ParseBoard, SizeOutOfRange) {
  EXPECT_THAT(Error("0"), HasSubstr("board size 1x1 is out of range"));
  EXPECT_THAT(Error("1 0"), HasSubstr("cannot tell the board's shape"));
  EXPECT_THAT(Error("1 0", 1, 2), HasSubstr("board size 1x2 is out of range"));
  std::string big;
  for (int t = 1; t < 17 * 17; ++t) big += std::to_string(t) + " ";
  EXPECT_THAT(Error(big + "0"), HasSubstr("board size 17x17 is out of range"));
}

TEST(ParseBoard, Empty) {
  EXPECT_THAT(Error(""), HasSubstr("empty board"));
  EXPECT_THAT(Error(" / \n"), HasSubstr("empty board"));
}

}  // namespace
}  // namespace npuzzle
