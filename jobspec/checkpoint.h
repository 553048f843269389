// A job's IDA* checkpoint (v1::Checkpoint) from end to end: how a worker
// builds it from the engine's callbacks, how the coordinator keeps the
// newest, and what a run resumes from. Written once here so that the
// three agree on what a checkpoint means.
//
// A checkpoint says that no solution is shorter than `bound` (every lower
// threshold was searched) and, mid-threshold, which subtrees of threshold
// `bound` were searched to their end without one. Resuming at `bound` and
// skipping those subtrees therefore finds the same optimal length; a
// subtree is skipped only if the resumed run splits the threshold into the
// same subtrees (the engine checks the frontier's fingerprint).
#ifndef NPUZZLE_JOBSPEC_CHECKPOINT_H_
#define NPUZZLE_JOBSPEC_CHECKPOINT_H_

#include <cstddef>
#include <vector>

#include "engine/search.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

// The most subtrees a checkpoint records (a bit each). The engine splits a
// threshold into a few thousand; this bounds what a coordinator stores.
inline constexpr size_t kMaxCheckpointSubtrees = size_t{1} << 19;

// The job's checkpoint once this run finished an iteration: `earlier` (what
// the run resumed from) plus the run's counts, at the next threshold, with
// no subtrees of it done yet.
v1::Checkpoint AfterIteration(const v1::Checkpoint& earlier, const IterationCheckpoint& c);

// `checkpoint` (the job's latest) with subtree `s` done: its bit set, its
// next bound and counts added. Subtrees recorded for another threshold or
// another split are dropped first (their counts stay: that work was done).
// A subtree beyond kMaxCheckpointSubtrees is not recorded.
void AddSubtree(const SubtreeCheckpoint& s, v1::Checkpoint* checkpoint);

// The subtrees a run resuming from `checkpoint` may skip
// (SearchOptions::resume_subtrees).
std::vector<SubtreeCheckpoint> SubtreesDone(const v1::Checkpoint& checkpoint);

// For the coordinator: takes `incoming`'s threshold, counts and subtrees
// into `stored` if it got further (a higher threshold, or more of the same
// one; within one job the counts only grow), and says whether it did. The
// best answer and bound (MergeBest) are left alone. A checkpoint with more
// subtrees than kMaxCheckpointSubtrees is ignored.
bool MergeThreshold(const v1::Checkpoint& incoming, v1::Checkpoint* stored);

}  // namespace npuzzle

#endif  // NPUZZLE_JOBSPEC_CHECKPOINT_H_
