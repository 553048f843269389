// Reads a board from the text forms people type: numbers separated by
// spaces or commas ("8 1 3 4 0 2 7 6 5"), rows split by '/' or new lines,
// or single-character rows with b, _ or . as the blank ("134 8b5 726").
#ifndef NPUZZLE_ENGINE_BOARD_PARSER_H_
#define NPUZZLE_ENGINE_BOARD_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/board.h"

namespace npuzzle {

// rows and cols of 0 mean "not given": the shape then comes from the rows
// in the text, or from a square tile count. Errors name what is wrong.
absl::StatusOr<Board> ParseBoard(absl::string_view text, int rows = 0, int cols = 0);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_BOARD_PARSER_H_
