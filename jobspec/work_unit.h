// Work units of a job spread over workers (JobSpec.max_workers), as the
// coordinator hands them out and a worker runs them: the spec a unit runs
// under, and the engine request an assignment stands for. Written once here
// so that the coordinator, the worker and the tests that play either part
// agree on what a unit is.
#ifndef NPUZZLE_JOBSPEC_WORK_UNIT_H_
#define NPUZZLE_JOBSPEC_WORK_UNIT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/search.h"
#include "engine/solver.h"
#include "npuzzle/v1/worker.pb.h"

namespace npuzzle {

// What a unit's worker runs: the job's spec on one thread, with what is
// left of the job's node and time limits (a limit the job does not set
// stays unset). Labels and the request id stay with the job.
v1::JobSpec UnitSpec(const v1::JobSpec& job, uint64_t nodes_left, absl::Duration time_left);

// The request an assignment stands for: its spec's, resuming from what an
// earlier attempt stored (the best answer of auto and anytime, IDA*'s
// threshold and finished subtrees), and for a work unit
// a pass over the unit's subtree at its bound that gives work away through
// `hand_back` (may be null). Errors are InvalidArgument naming the field.
absl::StatusOr<SolveRequest> RequestFromAssignment(const v1::Assignment& assignment, HandBack* hand_back = nullptr);

}  // namespace npuzzle

#endif  // NPUZZLE_JOBSPEC_WORK_UNIT_H_
