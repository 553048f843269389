// Reading many problems at once: Kunkle's layout (a start line then a goal
// line, repeated) or one start board per line with a goal from the flags.
#ifndef NPUZZLE_CLIENT_PROBLEMS_H_
#define NPUZZLE_CLIENT_PROBLEMS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/board.h"

namespace npuzzle {

struct Problem {
  Board start;
  Board goal;
  int line = 0;  // where the start board was read
};

// The problems named by --board or --file (a path, or - for stdin; stdin
// also when neither is given and it is not a terminal). With --goal or
// --goal-preset every line is a start board; otherwise lines pair up as
// start and goal. Blank lines and lines starting with # are skipped. The
// error lists every bad line.
absl::StatusOr<std::vector<Problem>> ProblemsFromFlags();

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_PROBLEMS_H_
