#include "engine/board_parser.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace npuzzle {
namespace {

bool IsBlankChar(char c) { return c == 'b' || c == '_' || c == '.'; }

using Rows = std::vector<std::vector<std::string>>;

// Lines split on '/' and new lines; tokens on white space and commas.
Rows Tokenize(absl::string_view text) {
  Rows rows;
  for (absl::string_view line : absl::StrSplit(text, absl::ByAnyChar("/\n\r"))) {
    std::vector<std::string> tokens = absl::StrSplit(line, absl::ByAnyChar(" \t,;"), absl::SkipEmpty());
    if (!tokens.empty()) rows.push_back(std::move(tokens));
  }
  return rows;
}

// Character rows: every token is a whole row of single-character cells.
// A row has at least two cells, while a numeric board always holds the
// one-digit tiles, so "every token is two or more characters long" tells
// the forms apart.
bool IsCharacterForm(const Rows& rows) {
  for (const auto& row : rows) {
    for (const std::string& token : row) {
      if (token.size() < 2) return false;
    }
  }
  return true;
}

absl::StatusOr<int> ParseCell(char c) {
  if (IsBlankChar(c) || c == '0') return 0;
  if (c >= '1' && c <= '9') return c - '0';
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown token '%c' in a character row (cells are 1-9 with b, _ or . "
                      "for the blank; use numbers separated by spaces for larger boards)",
                      c));
}

absl::StatusOr<int> ParseNumber(const std::string& token, int position) {
  if (token.size() == 1 && IsBlankChar(token[0])) return 0;
  int value;
  if (!absl::SimpleAtoi(token, &value)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown token '%s' at position %d (expected a tile number, 0 or b "
                        "for the blank)",
                        token, position));
  }
  return value;
}

// Turns tokens into one tile list per row.
absl::StatusOr<std::vector<std::vector<int>>> ReadTiles(const Rows& rows) {
  std::vector<std::vector<int>> out;
  if (IsCharacterForm(rows)) {
    for (const auto& row : rows) {
      for (const std::string& token : row) {
        std::vector<int> cells;
        for (char c : token) {
          absl::StatusOr<int> cell = ParseCell(c);
          if (!cell.ok()) return cell.status();
          cells.push_back(*cell);
        }
        out.push_back(std::move(cells));
      }
    }
    return out;
  }
  int position = 0;
  for (const auto& row : rows) {
    std::vector<int> tiles;
    for (const std::string& token : row) {
      absl::StatusOr<int> tile = ParseNumber(token, ++position);
      if (!tile.ok()) return tile.status();
      tiles.push_back(*tile);
    }
    out.push_back(std::move(tiles));
  }
  return out;
}

}  // namespace

absl::StatusOr<Board> ParseBoard(absl::string_view text, int rows, int cols) {
  if (rows < 0 || cols < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("board size %dx%d is out of range", rows, cols));
  }
  const Rows tokens = Tokenize(text);
  if (tokens.empty()) return absl::InvalidArgumentError("empty board");
  absl::StatusOr<std::vector<std::vector<int>>> lines = ReadTiles(tokens);
  if (!lines.ok()) return lines.status();

  std::vector<int> tiles;
  for (const auto& line : *lines) tiles.insert(tiles.end(), line.begin(), line.end());
  const int count = static_cast<int>(tiles.size());

  if (lines->size() > 1) {
    const int width = static_cast<int>(lines->front().size());
    for (size_t r = 1; r < lines->size(); ++r) {
      if (static_cast<int>((*lines)[r].size()) != width) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "rows have different lengths: row 1 has %d cells, row %d has %d", width, r + 1, (*lines)[r].size()));
      }
    }
    const int laid_rows = static_cast<int>(lines->size());
    if ((rows != 0 && rows != laid_rows) || (cols != 0 && cols != width)) {
      return absl::InvalidArgumentError(absl::StrFormat("the board is laid out as %dx%d but %dx%d was asked for",
                                                        laid_rows, width, rows != 0 ? rows : laid_rows,
                                                        cols != 0 ? cols : width));
    }
    rows = laid_rows;
    cols = width;
  } else if (rows == 0 && cols == 0) {
    const int side = static_cast<int>(std::lround(std::sqrt(count)));
    if (side * side != count) {
      return absl::InvalidArgumentError(
          absl::StrFormat("cannot tell the board's shape from %d tiles: give the rows and "
                          "columns, or separate rows with '/'",
                          count));
    }
    rows = cols = side;
  } else if (rows == 0 || cols == 0) {
    const bool rows_known = rows != 0;
    const int known = rows_known ? rows : cols;
    if (count % known != 0) {
      return absl::InvalidArgumentError(absl::StrFormat("wrong number of tiles: %d tiles do not fill %d %s", count,
                                                        known, rows_known ? "rows" : "columns"));
    }
    (rows_known ? cols : rows) = count / known;
  }
  return Board::Create(rows, cols, std::move(tiles));
}

}  // namespace npuzzle
