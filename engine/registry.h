// The algorithms and heuristics a solve can name, with everything known about
// each: optimality, admissibility, which options it takes and how they are
// checked. Adding one means writing its file and adding a line to the tables
// in registry.cc; the CLI's help is built from here, and a test checks the
// proto comments and the README against it.
#ifndef NPUZZLE_ENGINE_REGISTRY_H_
#define NPUZZLE_ENGINE_REGISTRY_H_

#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/board.h"
#include "engine/heuristic_options.h"
#include "engine/puzzle.h"
#include "engine/search.h"

namespace npuzzle {

enum class Optimality {
  kNever,                             // dfs, greedy
  kAlways,                            // bfs, iddfs, ucs
  kWithAdmissibleHeuristic,           // astar, idastar
  kWithAdmissibleAndWeightAtMostOne,  // wastar
  kWhenProved,                        // auto, anytime: the result says
};

// Weighted algorithms' weight when a request gives none, and its bound.
inline constexpr double kDefaultWeight = 2.0;
inline constexpr double kMaxWeight = 100.0;

struct AlgorithmInfo {
  absl::string_view name;
  absl::string_view summary;
  bool uses_heuristic;
  Optimality optimality;
  bool takes_weight;  // f = g + weight * h
  // Searches one subtree at a time on request (SearchOptions::subtree),
  // so that a job can be spread over workers.
  bool splits;
  // The largest side of a board it takes: the classic searches' states are
  // 64 cells (engine/puzzle.h), the anytime solver's 256 (engine/anytime/grid.h).
  int max_side = kMaxSide;
  // Not one search but several run by Solve (engine/anytime/anytime_solver.h);
  // RunSearch refuses it.
  bool portfolio = false;
};

struct HeuristicInfo {
  absl::string_view name;
  absl::string_view summary;
  bool admissible;
  bool consistent;
  bool takes_pattern_groups;  // HeuristicOptions::pdb_preset, pdb_groups
};

std::span<const AlgorithmInfo> Algorithms();
std::span<const HeuristicInfo> Heuristics();
const AlgorithmInfo* FindAlgorithm(absl::string_view name);
const HeuristicInfo* FindHeuristic(absl::string_view name);

// Errors naming the unknown algorithm or heuristic, listing the known ones.
absl::Status CheckAlgorithmName(absl::string_view name);
absl::Status CheckHeuristicName(absl::string_view name);

// "bfs, dfs, ...": the names in registry order, for help texts.
std::string AlgorithmNames();
std::string HeuristicNames();

// Checks the options that only some entries take: a weight for an algorithm
// that does not take one is an error naming the ones that do, and so are
// pattern groups for a heuristic (or an uninformed algorithm) that does not
// use them; a heuristic's own options are checked against the goal (pattern
// groups must partition its tiles). `heuristic` is ignored when the
// algorithm uses none.
absl::Status ValidateEntryOptions(absl::string_view algorithm, absl::string_view heuristic, bool weight_given,
                                  double weight, const Board& goal, const HeuristicOptions& options);

// An error unless `algorithm` splits (AlgorithmInfo::splits); `what` names
// what needed it ("max_workers above 1"), and the error names the
// algorithms that do.
absl::Status CheckSplits(absl::string_view algorithm, absl::string_view what);

// What a search run is asked for beyond the problem itself.
struct SearchSpec {
  absl::string_view algorithm;
  absl::string_view heuristic;  // ignored by uninformed algorithms
  double weight = 1.0;
  SearchOptions options;
  HeuristicOptions heuristic_options;
};

// Builds the heuristic and runs the algorithm. Errors only for unknown names
// (or a portfolio algorithm, which is not one search) or a heuristic that cannot be built for this puzzle (a bad
// pattern group, an unwritable table directory).
absl::StatusOr<SearchOutcome> RunSearch(const SearchSpec& spec, const Puzzle& puzzle, const Tiles& start);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_REGISTRY_H_
