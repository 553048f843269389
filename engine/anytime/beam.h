// Beam search toward a target: depth by depth, the `width` distinct states
// with the least heuristic value among the children of the last depth's,
// never one seen at an earlier depth, until the target is reached. Every
// state of a depth has the same cost so far, so ranking by the heuristic is
// ranking by f; with the width as its only knob, a wider beam is slower and
// (mostly) finds shorter answers, which is what an anytime solver wants.
// Children whose cost so far plus heuristic reaches `bound` are dropped:
// they cannot beat the answer already in hand.
//
// With pattern tables (boards up to 8x8 whose tables are built already),
// a child is ranked by the larger of its Manhattan + linear-conflict value
// and the tables' value. Both are admissible, so the bound still drops only
// children that cannot lead to a shorter answer, and the larger is the
// closer to the true distance, which is what ranking a beam by needs. A
// value of 0 still means the target: the Manhattan part is 0 only there.
//
// Only the chosen children are copied, and only their cells: a candidate is
// its parent, move, value and hash (Zobrist, updated per move) until it is
// chosen. The threads (a crew started once a search, crew.h) split each
// depth's parents between them, and then the choosing: all of it but the
// walk that takes the best in order. The answer does not depend on how
// many there are.
#ifndef NPUZZLE_ENGINE_ANYTIME_BEAM_H_
#define NPUZZLE_ENGINE_ANYTIME_BEAM_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/anytime/grid.h"
#include "engine/heuristics/pattern_database.h"
#include "engine/moves.h"

namespace npuzzle {

struct BeamOptions {
  int width = 100;
  int threads = 1;
  int bound = 0;      // > 0: only answers shorter than this; 0: no bound
  uint64_t seed = 0;  // breaks ties between equal values
  // Tables for the target, or none; only for boards of at most kMaxCells.
  const PatternDatabase* tables = nullptr;
  // Asked once a depth: true stops the search (no answer).
  std::function<bool()> stop;
  // Count the states expanded (parents) and generated (children), for the
  // caller's limits.
  std::atomic<uint64_t>* expanded = nullptr;
  std::atomic<uint64_t>* generated = nullptr;
};

// The most a beam of `width` holds in memory at `depth`.
uint64_t BeamBytes(const Grid& grid, uint64_t width, int depth);

std::optional<std::vector<Dir>> BeamSearch(const Grid& grid, const GridHeuristic& heuristic, const GridState& start,
                                           const BeamOptions& options);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ANYTIME_BEAM_H_
