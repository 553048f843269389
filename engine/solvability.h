// Whether a start board can reach a goal board, decided without searching.
#ifndef NPUZZLE_ENGINE_SOLVABILITY_H_
#define NPUZZLE_ENGINE_SOLVABILITY_H_

#include "absl/status/status.h"
#include "engine/board.h"

namespace npuzzle {

// OK when start and goal have the same shape; otherwise an error saying so.
absl::Status CheckSameShape(const Board& start, const Board& goal);

// Every move swaps the blank with a neighbour: it flips the parity of the
// permutation taking goal to start (blank included) and the parity of the
// blank's Manhattan distance from its goal cell. The two parities agree for
// exactly the reachable boards, for any width and any goal.
bool IsSolvable(const Board& start, const Board& goal);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_SOLVABILITY_H_
