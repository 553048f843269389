// The algorithms and heuristics a solve can name, with what is known about
// each (optimality, admissibility). Adding one means writing its file and
// adding a line to the tables in registry.cc.
#ifndef NPUZZLE_ENGINE_REGISTRY_H_
#define NPUZZLE_ENGINE_REGISTRY_H_

#include <span>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "engine/heuristic_options.h"
#include "engine/puzzle.h"
#include "engine/search.h"

namespace npuzzle {

enum class Optimality {
  kNever,                    // dfs, greedy
  kAlways,                   // bfs, iddfs, ucs
  kWithAdmissibleHeuristic,  // astar, idastar
  kWithAdmissibleAndWeightAtMostOne,  // wastar
};

struct AlgorithmInfo {
  absl::string_view name;
  absl::string_view summary;
  bool uses_heuristic;
  Optimality optimality;
};

struct HeuristicInfo {
  absl::string_view name;
  absl::string_view summary;
  bool admissible;
  bool consistent;
};

std::span<const AlgorithmInfo> Algorithms();
std::span<const HeuristicInfo> Heuristics();
const AlgorithmInfo* FindAlgorithm(absl::string_view name);
const HeuristicInfo* FindHeuristic(absl::string_view name);

// Errors naming the unknown algorithm or heuristic, listing the known ones.
absl::Status CheckAlgorithmName(absl::string_view name);
absl::Status CheckHeuristicName(absl::string_view name);

// What a search run is asked for beyond the problem itself.
struct SearchSpec {
  absl::string_view algorithm;
  absl::string_view heuristic;  // ignored by uninformed algorithms
  double weight = 1.0;
  SearchOptions options;
  HeuristicOptions heuristic_options;
};

// Builds the heuristic and runs the algorithm. Errors only for unknown names
// or a heuristic that cannot be built for this puzzle (a bad pattern group,
// an unwritable table directory).
absl::StatusOr<SearchOutcome> RunSearch(const SearchSpec& spec,
                                        const Puzzle& puzzle,
                                        const Tiles& start);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_REGISTRY_H_
