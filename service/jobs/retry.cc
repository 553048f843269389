#include "service/jobs/retry.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/search.h"
#include "service/store/job_store.h"

namespace npuzzle {
namespace {

// Why running `old` again is pointless; OK if it is not.
absl::Status Pointless(const v1::Job& old) {
  const std::string job = absl::StrCat("job ", ShownId(old.id()));
  switch (old.state()) {
    case v1::JOB_STATE_CANCELLED:
      return absl::OkStatus();
    case v1::JOB_STATE_FAILED:
      if (!old.error_permanent()) return absl::OkStatus();
      return absl::FailedPreconditionError(
          absl::StrCat(job, " failed for a reason in its spec, which a retry would meet again: ", old.error()));
    case v1::JOB_STATE_DONE: {
      const std::optional<SearchStatus> status = StatusFromName(old.result().status());
      // An anytime answer stopped by a limit may get shorter with more.
      const bool cut_short = (status && IsLimit(*status)) ||
                             (!old.result().optimal() && absl::EndsWith(old.result().stopped_by(), " limit"));
      if (cut_short) return absl::OkStatus();
      return absl::FailedPreconditionError(
          absl::StrCat(job, " ended with its answer (", old.result().status(), "): there is nothing to retry"));
    }
    default:
      return absl::FailedPreconditionError(absl::StrCat(job, " has not finished: watch it, or cancel it first"));
  }
}

}  // namespace

absl::StatusOr<v1::JobSpec> RetrySpec(const v1::Job& old, const v1::RetryJobRequest& request) {
  if (absl::Status s = Pointless(old); !s.ok()) return s;
  v1::JobSpec spec = old.spec();
  spec.set_request_id(request.request_id());
  if (request.has_limits()) *spec.mutable_limits() = request.limits();
  spec.set_retry_of(old.id());
  return spec;
}

}  // namespace npuzzle
