// Solve: the engine's front door. Checks a request, decides solvability
// before any search, runs the named algorithm and heuristic under the
// request's limits, and returns a replay-checked answer.
#ifndef NPUZZLE_ENGINE_SOLVER_H_
#define NPUZZLE_ENGINE_SOLVER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/board.h"
#include "engine/heuristic_options.h"
#include "engine/search.h"

namespace npuzzle {

// An answer an anytime solve has in hand, and what is proven about the
// optimal length: reported as either improves, and taken back by a solve
// that resumes an earlier attempt.
struct BestSoFar {
  std::vector<Dir> moves;
  int lower_bound = 0;
};

struct SolveRequest {
  Board start;
  Board goal;
  std::string algorithm = "auto";
  std::string heuristic = "manhattan";
  std::optional<double> weight;  // for algorithms that take one; kDefaultWeight when unset
  SearchOptions options;
  HeuristicOptions heuristic_options;
  // auto and anytime only.
  double max_gap = 0;                                    // >= 1: stop once length <= max_gap * lower bound; 0: never
  BestSoFar resume;                                      // an earlier attempt's: moves that do not replay are ignored
  std::function<void(const BestSoFar&)> on_improvement;  // one call at a time
};

// JobSpec.max_gap's range when set.
inline constexpr double kMinGap = 1.0;
inline constexpr double kMaxGap = 100.0;

struct SolveResult {
  SearchStatus status = SearchStatus::kSolved;
  std::vector<Dir> moves;       // the blank's moves
  std::vector<int> tile_moves;  // the tile that slid at each move
  bool optimal = false;         // the answer is guaranteed shortest
  SearchStats stats;
  std::string algorithm;
  std::string heuristic;  // "none" for uninformed algorithms
  int next_bound = 0;     // SearchOutcome::next_bound
  // No answer is shorter: the answer's length when optimal, else what an
  // anytime solve proved (0 when nothing is known).
  int lower_bound = 0;
  // auto and anytime: what ran and why, and why it stopped.
  std::string chosen;
  std::string stopped_by;
};

// Everything Solve would reject, without searching: shapes, names, weight,
// limits. Errors are InvalidArgument and name the problem.
absl::Status ValidateSolveRequest(const SolveRequest& request);

absl::StatusOr<SolveResult> Solve(const SolveRequest& request);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_SOLVER_H_
