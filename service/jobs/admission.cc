#include "service/jobs/admission.h"

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/solvability.h"
#include "jobspec/job_spec.h"
#include "jobspec/spec_bounds.h"
#include "service/jobs/job_record.h"
#include "service/split/split_job.h"

namespace npuzzle {
namespace {

std::string NewJobId() {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* gen = new absl::BitGen;
  absl::MutexLock lock(&mu);
  return absl::StrFormat("job-%016x", absl::Uniform<uint64_t>(*gen));
}

}  // namespace

absl::StatusOr<v1::Job> NewJob(const v1::JobSpec& submitted, const std::string& tenant, const LimitPolicy& limits) {
  if (absl::Status s = CheckSpecBounds(submitted); !s.ok()) return s;
  v1::JobSpec spec = submitted;
  if (absl::Status s = limits.Apply(spec); !s.ok()) return s;
  absl::StatusOr<SolveRequest> request = RequestFromSpec(spec);
  if (!request.ok()) return request.status();
  // Built here, outside any lock, so that the split job looks it up.
  WarmSplit(spec);

  v1::Job job;
  job.set_id(NewJobId());
  job.set_tenant(tenant);
  *job.mutable_spec() = std::move(spec);
  *job.mutable_start() = BoardToProto(request->start);
  *job.mutable_goal() = BoardToProto(request->goal);
  SetTime(job.mutable_create_time(), absl::Now());
  if (!IsSolvable(request->start, request->goal)) {
    SolveResult unsolvable;
    unsolvable.status = SearchStatus::kUnsolvable;
    unsolvable.algorithm = request->algorithm;
    unsolvable.heuristic = request->heuristic;
    *job.mutable_result() = ResultToProto(unsolvable);
  }
  return job;
}

absl::Status Refusal(const v1::Job& job, bool accepting, const JobQueue& queue, size_t max_queued,
                     const TenantQuota& quota) {
  if (!accepting) return absl::UnavailableError("the service is shutting down and takes no new jobs");
  if (job.has_result()) return absl::OkStatus();
  if (queue.size() >= max_queued) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("the queue is full (%d jobs waiting); try again later", queue.size()));
  }
  const size_t queued = queue.QueuedOf(job.tenant());
  if (quota.max_queued > 0 && static_cast<int64_t>(queued) >= quota.max_queued) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("tenant '%s' has %d jobs queued, its max_queued quota; submit more once some have started",
                        job.tenant(), queued));
  }
  return absl::OkStatus();
}

}  // namespace npuzzle
