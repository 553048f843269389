#include "engine/solver.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/anytime/anytime_solver.h"
#include "engine/puzzle.h"
#include "engine/registry.h"
#include "engine/solvability.h"

namespace npuzzle {
namespace {

bool GuaranteedOptimal(const AlgorithmInfo& algorithm, const HeuristicInfo& heuristic, double weight) {
  switch (algorithm.optimality) {
    case Optimality::kNever:
      return false;
    case Optimality::kAlways:
      return true;
    case Optimality::kWithAdmissibleHeuristic:
      return heuristic.admissible;
    case Optimality::kWithAdmissibleAndWeightAtMostOne:
      return heuristic.admissible && weight <= 1.0;
    case Optimality::kWhenProved:
      return false;  // the portfolio says itself
  }
  return false;
}

// Every answer is played back before it is returned: moves that do not
// take the start to the goal are a bug, reported as one. The tiles that
// slide go to `tile_moves`.
absl::Status ReplayCheck(const SolveRequest& request, const std::vector<Dir>& moves, std::vector<int>* tile_moves) {
  absl::StatusOr<Board> end = ApplyMoves(request.start, moves);
  if (!end.ok() || end->tiles() != request.goal.tiles()) {
    return absl::InternalError(
        absl::StrCat(request.algorithm, " returned moves that do not reach the goal: ", MovesToString(moves)));
  }
  *tile_moves = *TilesMoved(request.start, moves);
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSolveRequest(const SolveRequest& request) {
  if (absl::Status s = CheckSameShape(request.start, request.goal); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateEntryOptions(request.algorithm, request.heuristic, request.weight.has_value(),
                                            request.weight.value_or(0), request.goal, request.heuristic_options);
      !s.ok()) {
    return s;
  }
  const AlgorithmInfo& algorithm = *FindAlgorithm(request.algorithm);
  if (request.start.rows() > algorithm.max_side || request.start.cols() > algorithm.max_side) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s takes boards up to %dx%d, not %dx%d: auto and anytime take any board up to %dx%d",
                        algorithm.name, algorithm.max_side, algorithm.max_side, request.start.rows(),
                        request.start.cols(), kMaxBoardSide, kMaxBoardSide));
  }
  if (request.max_gap != 0) {
    if (!algorithm.portfolio) {
      return absl::InvalidArgumentError(
          absl::StrCat("max gap applies only to auto and anytime, not to ", request.algorithm));
    }
    if (!(request.max_gap >= kMinGap && request.max_gap <= kMaxGap)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("max gap %g is out of range (%g to %g)", request.max_gap, kMinGap, kMaxGap));
    }
  }
  const SearchLimits& limits = request.options.limits;
  if (limits.max_depth < 0) {
    return absl::InvalidArgumentError("max depth must not be negative");
  }
  if (limits.max_time < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("max time must not be negative");
  }
  if (request.options.threads < 1) {
    return absl::InvalidArgumentError("threads must be at least 1");
  }
  if (const auto& subtree = request.options.subtree) {
    if (absl::Status s = CheckSplits(request.algorithm, "a subtree pass"); !s.ok()) return s;
    if (absl::StatusOr<Board> root = ApplyMoves(request.start, subtree->prefix); !root.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("subtree prefix: ", root.status().message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SolveResult> Solve(const SolveRequest& request) {
  if (absl::Status s = ValidateSolveRequest(request); !s.ok()) return s;
  const AlgorithmInfo& algorithm = *FindAlgorithm(request.algorithm);
  const std::string heuristic_name = algorithm.uses_heuristic ? request.heuristic : "zero";
  const double weight = request.weight.value_or(kDefaultWeight);

  SolveResult result;
  result.algorithm = request.algorithm;
  result.heuristic = algorithm.uses_heuristic ? request.heuristic : "none";
  if (!IsSolvable(request.start, request.goal)) {
    result.status = SearchStatus::kUnsolvable;
    return result;
  }

  if (algorithm.portfolio) {
    absl::StatusOr<SolveResult> anytime = SolveAnytime(request);
    if (!anytime.ok()) return anytime.status();
    if (anytime->status == SearchStatus::kSolved || !anytime->moves.empty()) {
      if (absl::Status s = ReplayCheck(request, anytime->moves, &anytime->tile_moves); !s.ok()) return s;
    }
    return anytime;
  }

  const Puzzle puzzle(request.goal);
  const SearchSpec spec{request.algorithm, heuristic_name, weight, request.options, request.heuristic_options};
  absl::StatusOr<SearchOutcome> outcome = RunSearch(spec, puzzle, Puzzle::ToTiles(request.start));
  if (!outcome.ok()) return outcome.status();

  result.status = outcome->status;
  result.stats = outcome->stats;
  result.next_bound = outcome->next_bound;
  if (result.status == SearchStatus::kSolved) {
    if (absl::Status s = ReplayCheck(request, outcome->moves, &result.tile_moves); !s.ok()) return s;
    result.moves = std::move(outcome->moves);
    result.optimal = GuaranteedOptimal(algorithm, *FindHeuristic(heuristic_name), weight);
    if (result.optimal) result.lower_bound = static_cast<int>(result.moves.size());
  }
  return result;
}

}  // namespace npuzzle
