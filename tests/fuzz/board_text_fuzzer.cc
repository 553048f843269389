// Board and goal text as people type it (every form ParseBoard accepts,
// with or without a given shape), boards sent as tiles, and move lists.
// Whatever is accepted must be a whole board of an accepted shape that
// reads back the same from its own text.
#include <cstdint>
#include <string>

#include "engine/board_parser.h"
#include "engine/moves.h"
#include "jobspec/job_spec.h"
#include "tests/fuzz/fuzz_check.h"

namespace npuzzle {
namespace {

void CheckBoard(const Board& b) {
  FUZZ_CHECK(b.rows() >= kMinSide && b.rows() <= kMaxBoardSide && b.cols() >= kMinSide && b.cols() <= kMaxBoardSide,
             "shape %s", b.Dimensions().c_str());
  std::vector<bool> seen(b.cells(), false);
  for (int cell = 0; cell < b.cells(); ++cell) {
    const int tile = b.at(cell);
    FUZZ_CHECK(tile >= 0 && tile < b.cells() && !seen[tile], "tile %d at %d", tile, cell);
    seen[tile] = true;
  }
  absl::StatusOr<Board> again = ParseBoard(b.ToString(), b.rows(), b.cols());
  FUZZ_CHECK(again.ok() && *again == b, "%s does not read back", b.ToString().c_str());
}

}  // namespace
}  // namespace npuzzle

// First byte: rows (0: not given); second: cols; the rest is the text. The
// shapes given run one past the largest accepted side, so refusals are tried.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuzzle;
  if (size < 2) return 0;
  const int rows = data[0] % (kMaxBoardSide + 2), cols = data[1] % (kMaxBoardSide + 2);
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  if (absl::StatusOr<Board> b = ParseBoard(text, rows, cols); b.ok()) {
    CheckBoard(*b);
  } else {
    FUZZ_CHECK(!b.status().message().empty(), "an error without a reason");
  }
  v1::Board proto;
  proto.set_rows(rows);
  proto.set_cols(cols);
  for (size_t i = 2; i < size; ++i) proto.add_tiles(static_cast<int8_t>(data[i]));
  if (absl::StatusOr<Board> b = BoardFromProto(proto); b.ok()) CheckBoard(*b);
  if (absl::StatusOr<std::vector<Dir>> moves = ParseMoves(text); moves.ok()) {
    absl::StatusOr<std::vector<Dir>> again = ParseMoves(MovesToString(*moves));
    FUZZ_CHECK(again.ok() && *again == *moves, "moves do not read back");
  }
  return 0;
}
