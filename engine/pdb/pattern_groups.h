// Which tiles each additive pattern database covers: presets (8, 5-5-5,
// 6-6-3, 7-8, 6-6-6-6, 6-6-6-6b), an explicit partition ("1,2,3/4,5,6/7,8"),
// or an automatic one for any other board. Groups are disjoint, so their
// tables add up to an admissible heuristic; tiles in no group add their
// Manhattan distance (they count only their own moves, so the sum stays
// admissible). Several partitions joined by '+' ("6-6-6-6+6-6-6-6b") each
// give such a sum, and the search takes the largest.
#ifndef NPUZZLE_ENGINE_PDB_PATTERN_GROUPS_H_
#define NPUZZLE_ENGINE_PDB_PATTERN_GROUPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/board.h"

namespace npuzzle {

// The largest table the engine will build: 16!/8! entries (the 8-tile
// group of the 15-puzzle's 7-8 split).
inline constexpr uint64_t kMaxPatternEntries = 518918400;
inline constexpr size_t kMaxPatternGroups = 8;
// Each partition costs a lookup a move (two with the mirror), and each
// adds to the size of every search node (engine/heuristics/pattern_database.h).
inline constexpr size_t kMaxPatternPartitions = 2;

using PatternGroups = std::vector<std::vector<int>>;  // each sorted
using PatternPartitions = std::vector<PatternGroups>;

// Presets are regions of the board, laid out for a goal with the blank in
// the top-left corner and mirrored to the corner nearest the goal's blank,
// so "7-8" means the top two rows and the bottom two whatever the goal.
// An empty preset and empty groups pick the board's default: one table for
// boards up to 10 cells, 6-6-3 for 4x4, 6-6-6-6 for 5x5, otherwise tiles in
// goal reading order cut into groups whose tables stay small.
absl::StatusOr<PatternPartitions> ResolvePatternPartitions(const Board& goal, absl::string_view preset,
                                                           absl::string_view explicit_groups);

std::vector<std::string> PatternPresetNames();

// "1,2,3/4,5,6+1,4/2,3,5,6": tiles by number, groups separated by '/',
// partitions by '+'.
std::string FormatPatternPartitions(const PatternPartitions& partitions);

// n!/(n-k)!: entries in the table of a k-tile group on an n-cell board.
uint64_t PatternEntries(int cells, int tiles);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_PATTERN_GROUPS_H_
