// Named goal arrangements for any board shape.
#ifndef NPUZZLE_ENGINE_GOALS_H_
#define NPUZZLE_ENGINE_GOALS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/board.h"

namespace npuzzle {

// "standard": 1 .. N-1 then the blank; "blank-first": the blank then
// 1 .. N-1; "snail": tiles spiral clockwise inwards from the top-left and the
// blank sits where the spiral ends (3x3: 1 2 3 / 8 0 4 / 7 6 5).
absl::StatusOr<Board> GoalPreset(absl::string_view name, int rows, int cols);

std::vector<std::string> GoalPresetNames();

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_GOALS_H_
