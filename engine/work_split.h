// Cutting one IDA* search into subtrees that separate processes search a
// threshold at a time (a job spread over workers, service/split_job.h;
// each subtree is a SearchOptions::subtree pass).
//
// The roots are nodes a few moves below the start, each reached by the
// earliest move sequence in U, D, L, R order that the pruning machine
// (engine/move_pruning.h) allows, each node once and only at its distance
// from the start. Among the shortest solutions, take the one earliest in
// that order: no piece of it is one the machine rejects, and its first
// moves are the earliest shortest way to the node they reach, so it starts
// with exactly one root's sequence and lies in that root's subtree.
// Searching every root's subtree at a bound therefore finds a solution of
// that length whenever one exists.
#ifndef NPUZZLE_ENGINE_WORK_SPLIT_H_
#define NPUZZLE_ENGINE_WORK_SPLIT_H_

#include <cstddef>
#include <vector>

#include "engine/board.h"
#include "engine/move_pruning.h"
#include "engine/moves.h"

namespace npuzzle {

struct SplitFrontier {
  // No solution is shorter than this: every root is this many moves from
  // the start, and no node nearer is the goal unless the start is.
  int depth = 0;
  std::vector<std::vector<Dir>> roots;  // in U, D, L, R order
};

// Grows the roots a level at a time until there are `enough` of them or
// they are `max_depth` deep, stopping a level short of any goal (the
// subtree passes then find it). `pruning` may be null: only moves that undo
// the last one are left out then.
SplitFrontier GrowSplitFrontier(const Board& start, const Board& goal, const MovePruning* pruning, size_t enough,
                                int max_depth);

// The roots one move below `root` (a root of the frontier or of an earlier
// call), for a subtree too large to be one unit: searching them covers it.
std::vector<std::vector<Dir>> SplitSubtree(const Board& start, const Board& goal, const MovePruning* pruning,
                                           const std::vector<Dir>& root);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_WORK_SPLIT_H_
