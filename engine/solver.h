// Solve: the engine's front door. Checks a request, decides solvability
// before any search, runs the named algorithm and heuristic under the
// request's limits, and returns a replay-checked answer.
#ifndef NPUZZLE_ENGINE_SOLVER_H_
#define NPUZZLE_ENGINE_SOLVER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/board.h"
#include "engine/heuristic_options.h"
#include "engine/search.h"

namespace npuzzle {

struct SolveRequest {
  Board start;
  Board goal;
  std::string algorithm = "astar";
  std::string heuristic = "manhattan";
  std::optional<double> weight;  // for algorithms that take one; kDefaultWeight when unset
  SearchOptions options;
  HeuristicOptions heuristic_options;
};

struct SolveResult {
  SearchStatus status = SearchStatus::kSolved;
  std::vector<Dir> moves;       // the blank's moves
  std::vector<int> tile_moves;  // the tile that slid at each move
  bool optimal = false;         // the answer is guaranteed shortest
  SearchStats stats;
  std::string algorithm;
  std::string heuristic;  // "none" for uninformed algorithms
  int next_bound = 0;     // SearchOutcome::next_bound
};

// Everything Solve would reject, without searching: shapes, names, weight,
// limits. Errors are InvalidArgument and name the problem.
absl::Status ValidateSolveRequest(const SolveRequest& request);

absl::StatusOr<SolveResult> Solve(const SolveRequest& request);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_SOLVER_H_
