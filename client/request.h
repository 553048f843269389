// What a command line asks the engine for: the boards it names (read with
// its --rows and --cols, against its goal) and the request its search,
// limit and table flags make.
#ifndef NPUZZLE_CLIENT_REQUEST_H_
#define NPUZZLE_CLIENT_REQUEST_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/cli_flags.h"
#include "engine/board.h"
#include "engine/solver.h"

namespace npuzzle {

// The goal from --goal or --goal-preset (default "standard") for a board
// of the given shape.
absl::StatusOr<Board> GoalOf(const Invocation& in, int rows, int cols);

struct Problem {
  Board start;
  Board goal;
  int line = 0;  // where the start board was read
};

// The problems named by --board or --file (a path, or - for stdin; stdin
// also when neither is given and it is not a terminal). One start board a
// line, each with the goal of --goal or --goal-preset; with --pairs the
// lines pair up as start and goal. Blank lines and lines starting with #
// are skipped. The error lists every bad line.
absl::StatusOr<std::vector<Problem>> ProblemsOf(const Invocation& in);

// Where a request will run: a local solve always has a memory limit (the
// machine's memory bounds it); a remote job leaves unset limits to the
// server.
enum class RequestFor { kLocal, kRemote };

// Algorithm, heuristic, weight, limits, seed, threads and tables from the
// command line; start and goal are left for the caller.
absl::StatusOr<SolveRequest> RequestOf(const Invocation& in, RequestFor where);

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_REQUEST_H_
