// RetryJob's rules: which finished jobs may run again, and the spec of the
// new job that does. A retry is a new job (its own id, attempts and
// result) linked to the old one by JobSpec.retry_of; the old job is left
// as it ended, so the record of what happened stays true.
#ifndef NPUZZLE_SERVICE_JOBS_RETRY_H_
#define NPUZZLE_SERVICE_JOBS_RETRY_H_

#include "absl/status/statusor.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

// The spec that runs `old` again: its own, with the request's request id
// (the old one names the old job) and limits (when given), and retry_of.
// FailedPrecondition, saying why, for a job that has not finished, ended
// with its answer, or failed for a reason in its spec.
absl::StatusOr<v1::JobSpec> RetrySpec(const v1::Job& old, const v1::RetryJobRequest& request);

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_RETRY_H_
