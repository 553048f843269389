#include "engine/board.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace npuzzle {

absl::Status CheckDimensions(int rows, int cols) {
  if (rows < kMinSide || rows > kMaxBoardSide || cols < kMinSide || cols > kMaxBoardSide) {
    return absl::InvalidArgumentError(
        absl::StrFormat("board size %dx%d is out of range: rows and columns must each be "
                        "between %d and %d",
                        rows, cols, kMinSide, kMaxBoardSide));
  }
  return absl::OkStatus();
}

namespace {

// "missing tile 8" / "missing tiles 3, 8"; empty when nothing in range is
// missing.
std::string DescribeMissing(const std::vector<int>& tiles, int cells) {
  std::vector<bool> present(cells, false);
  for (int t : tiles) {
    if (t >= 0 && t < cells) present[t] = true;
  }
  std::vector<int> missing;
  for (int t = 1; t < cells; ++t) {
    if (!present[t]) missing.push_back(t);
  }
  if (missing.empty()) return "";
  return absl::StrCat(missing.size() == 1 ? "missing tile " : "missing tiles ", absl::StrJoin(missing, ", "));
}

}  // namespace

absl::StatusOr<Board> Board::Create(int rows, int cols, std::vector<int> tiles) {
  if (absl::Status s = CheckDimensions(rows, cols); !s.ok()) return s;
  const int cells = rows * cols;
  const std::string missing = DescribeMissing(tiles, cells);
  if (static_cast<int>(tiles.size()) != cells) {
    std::string message = absl::StrFormat("wrong number of tiles for a %dx%d board: expected %d, got %d", rows, cols,
                                          cells, tiles.size());
    if (static_cast<int>(tiles.size()) < cells && !missing.empty()) {
      absl::StrAppend(&message, " (", missing, ")");
    }
    return absl::InvalidArgumentError(message);
  }
  std::vector<int> first_seen(cells, -1);
  bool has_blank = false;
  for (int i = 0; i < cells; ++i) {
    const int t = tiles[i];
    has_blank |= t == 0;
    if (t < 0 || t >= cells) continue;
    if (first_seen[t] >= 0) {
      return absl::InvalidArgumentError(
          t == 0 ? absl::StrFormat("more than one blank (positions %d and %d)", first_seen[t] + 1, i + 1)
                 : absl::StrFormat("duplicate tile %d (positions %d and %d)", t, first_seen[t] + 1, i + 1));
    }
    first_seen[t] = i;
  }
  if (!has_blank) {
    return absl::InvalidArgumentError("no blank: one cell must be 0 (or b, _ or . in character rows)");
  }
  for (int t : tiles) {
    if (t < 0 || t >= cells) {
      std::string message = absl::StrFormat(
          "tile %d is out of range for a %dx%d board (tiles are 1..%d, 0 is "
          "the blank)",
          t, rows, cols, cells - 1);
      if (!missing.empty()) absl::StrAppend(&message, "; ", missing);
      return absl::InvalidArgumentError(message);
    }
  }
  return Board(rows, cols, std::vector<uint8_t>(tiles.begin(), tiles.end()));
}

int Board::blank() const { return static_cast<int>(std::find(tiles_.begin(), tiles_.end(), 0) - tiles_.begin()); }

std::string Board::Dimensions() const { return absl::StrCat(rows_, "x", cols_); }

std::string Board::ToString() const {
  std::vector<std::string> rows;
  for (int r = 0; r < rows_; ++r) {
    rows.push_back(absl::StrJoin(tiles_.begin() + r * cols_, tiles_.begin() + (r + 1) * cols_, " ",
                                 [](std::string* out, uint8_t t) { absl::StrAppend(out, static_cast<int>(t)); }));
  }
  return absl::StrJoin(rows, " / ");
}

std::string Board::ToGrid() const {
  const int width = cells() > 10 ? 3 : 2;
  std::string out;
  for (int r = 0; r < rows_; ++r) {
    for (int c = 0; c < cols_; ++c) {
      const int t = at(r, c);
      absl::StrAppend(&out, absl::StrFormat("%*s", width, t == 0 ? "." : absl::StrCat(t)));
    }
    out += '\n';
  }
  return out;
}

}  // namespace npuzzle
