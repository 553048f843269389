// Builds one pattern database: for every placement of a group's tiles, the
// fewest moves of those tiles that bring them home from some blank position
// (moves of other tiles are free).
#ifndef NPUZZLE_ENGINE_PDB_PATTERN_BUILDER_H_
#define NPUZZLE_ENGINE_PDB_PATTERN_BUILDER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/board.h"
#include "engine/pdb/anonymous_memory.h"
#include "engine/pdb/packed_distances.h"
#include "engine/search.h"

namespace npuzzle {

struct PatternBuildProgress {
  int depth = 0;             // the breadth-first layer being expanded
  double layer_done = 0;     // how much of that layer's scan is done, 0 to 1
  uint64_t expanded = 0;     // abstract states expanded before this layer
  uint64_t state_space = 0;  // placements x blank cells: the bound on that
  absl::Duration elapsed;
};

struct PatternBuildOptions {
  int threads = 1;
  // Called from a building thread, at most once per progress_interval and
  // at the end of every layer.
  std::function<void(const PatternBuildProgress&)> on_progress;
  absl::Duration progress_interval = absl::Milliseconds(250);
  // Checked every few milliseconds by every building thread.
  const CancelToken* cancel = nullptr;
  absl::Time deadline = absl::InfiniteFuture();
  // Bits an entry takes while building (1 to 8; see PackedDistances). A
  // build whose distances outgrow them widens to a byte an entry, which
  // takes memory beyond PatternBuildBytes: it is refused past this limit.
  int distance_bits = kBuildDistanceBits;
  uint64_t max_memory_bytes = 0;  // 0: none
  // Also keep each placement's extra moves with the blank in each free
  // cell (engine/pdb/blank_extras.h), after the plain entries.
  bool blank_aware = false;
};

// Memory a build with kBuildDistanceBits entries takes at its peak (its scratch
// space and its entries, or at the end its entries and its result).
uint64_t PatternBuildBytes(int cells, int group_size, bool blank_aware);

// `group` holds the pattern's tiles in ascending order; the result holds a
// byte per entry, indexed by PlacementIndexer rank over their cells in that
// order, and then, if blank_aware, the extras.
// Cancelled or DeadlineExceeded when told to stop (within a few
// milliseconds); ResourceExhausted when its memory cannot be had.
absl::StatusOr<AnonymousMemory> BuildPatternDistances(const Board& goal, const std::vector<int>& group,
                                                      const PatternBuildOptions& options);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_PATTERN_BUILDER_H_
