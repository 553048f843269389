#include "engine/solver.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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
  }
  return false;
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

  const Puzzle puzzle(request.goal);
  const SearchSpec spec{request.algorithm, heuristic_name, weight, request.options, request.heuristic_options};
  absl::StatusOr<SearchOutcome> outcome = RunSearch(spec, puzzle, Puzzle::ToTiles(request.start));
  if (!outcome.ok()) return outcome.status();

  result.status = outcome->status;
  result.stats = outcome->stats;
  result.next_bound = outcome->next_bound;
  if (result.status == SearchStatus::kSolved) {
    std::vector<int> tiles;
    absl::StatusOr<Tiles> end = puzzle.Replay(Puzzle::ToTiles(request.start), outcome->moves, &tiles);
    if (!end.ok() || !puzzle.IsGoal(*end)) {
      return absl::InternalError(absl::StrCat(
          request.algorithm, " returned moves that do not reach the goal: ", MovesToString(outcome->moves)));
    }
    result.moves = std::move(outcome->moves);
    result.tile_moves = std::move(tiles);
    result.optimal = GuaranteedOptimal(algorithm, *FindHeuristic(heuristic_name), weight);
  }
  return result;
}

}  // namespace npuzzle
