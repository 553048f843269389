// The board, goal, algorithm, heuristic and limit flags shared by the local
// solve and the remote commands, and turning them into a SolveRequest.
#ifndef NPUZZLE_CLIENT_REQUEST_FLAGS_H_
#define NPUZZLE_CLIENT_REQUEST_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/board.h"
#include "engine/solver.h"

namespace npuzzle {

// The goal from --goal or --goal-preset (default "standard") for a board
// of the given shape.
absl::StatusOr<Board> GoalFromFlags(int rows, int cols);

// Whether --goal or --goal-preset was given.
bool GoalFlagGiven();

// Parses a board with --rows/--cols applied.
absl::StatusOr<Board> ParseBoardWithFlags(absl::string_view text);

// Where a request will run: a local solve always has a memory limit (the
// machine's memory bounds it); a remote job leaves unset limits to the
// server.
enum class RequestFor { kLocal, kRemote };

// Algorithm, heuristic, weight, limits, seed and threads from the flags;
// start and goal are left for the caller.
absl::StatusOr<SolveRequest> RequestFromFlags(RequestFor where);

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_REQUEST_FLAGS_H_
