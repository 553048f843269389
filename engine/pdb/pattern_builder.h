// Builds one pattern database: for every placement of a group's tiles, the
// fewest moves of those tiles that bring them home from some blank position
// (moves of other tiles are free).
#ifndef NPUZZLE_ENGINE_PDB_PATTERN_BUILDER_H_
#define NPUZZLE_ENGINE_PDB_PATTERN_BUILDER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/time/time.h"
#include "engine/board.h"

namespace npuzzle {

struct PatternBuildProgress {
  int depth = 0;             // the breadth-first layer just finished
  uint64_t expanded = 0;     // abstract states expanded so far
  uint64_t state_space = 0;  // placements x blank cells: the bound on that
  absl::Duration elapsed;
};

struct PatternBuildOptions {
  int threads = 1;
  std::function<void(const PatternBuildProgress&)> on_layer;
};

// The scratch memory a build needs beside its result, in bytes.
uint64_t PatternBuildScratchBytes(int cells, int group_size);

// `group` holds the pattern's tiles in ascending order; the result is
// indexed by PlacementIndexer rank over their cells in that order.
std::vector<uint8_t> BuildPatternDistances(const Board& goal, const std::vector<int>& group,
                                           const PatternBuildOptions& options);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_PATTERN_BUILDER_H_
