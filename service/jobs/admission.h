// Admission: what a submitted spec must pass, in the order a client's
// request meets it. The spec's own bounds come first (labels, request id,
// priority), then the service's limits and the engine's reading of it;
// whether the service has room for it is asked last, under the job
// manager's lock, since the queue may fill meanwhile.
#ifndef NPUZZLE_SERVICE_JOBS_ADMISSION_H_
#define NPUZZLE_SERVICE_JOBS_ADMISSION_H_

#include <string>

#include "absl/status/statusor.h"
#include "npuzzle/v1/solver.pb.h"
#include "service/jobs/job_queue.h"
#include "service/jobs/limit_policy.h"
#include "service/jobs/tenant_quota.h"

namespace npuzzle {

// The job `submitted` asks for, owned by `tenant`, not yet stored: a new
// id, the spec with the service's default limits filled in, the boards as
// the engine read them, and, for a board that cannot reach its goal, the
// "unsolvable" result (such a job is decided now and never searched).
// InvalidArgument naming the field for anything the spec gets wrong.
absl::StatusOr<v1::Job> NewJob(const v1::JobSpec& submitted, const std::string& tenant, const LimitPolicy& limits);

// Why the service cannot take `job` now, if it cannot: it is shutting
// down (UNAVAILABLE), its queue is full, or the tenant's queued quota is
// used (RESOURCE_EXHAUSTED). A decided job takes no room in the queue.
absl::Status Refusal(const v1::Job& job, bool accepting, const JobQueue& queue, size_t max_queued,
                     const TenantQuota& quota);

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_ADMISSION_H_
