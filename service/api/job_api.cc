#include "service/api/job_api.h"

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jobspec/spec_bounds.h"
#include "service/jobs/retry.h"

namespace npuzzle {
namespace {

// How long a cancel waits for a running job to stop before answering.
constexpr absl::Duration kCancelWait = absl::Seconds(2);

// What only the service may set in a spec.
absl::Status CheckSubmitted(const v1::JobSpec& spec) {
  if (spec.retry_of().empty()) return absl::OkStatus();
  return absl::InvalidArgumentError("retry_of is set by RetryJob, not by a submission: call RetryJob");
}

}  // namespace

absl::StatusOr<std::string> JobApi::Authenticate(const std::string* authorization) {
  if (tokens_ == nullptr) return std::string();
  return tokens_->TenantOf(authorization);
}

void JobApi::Submit(const std::string& tenant, const v1::SubmitJobRequest& request, JobReply reply) {
  if (absl::Status s = CheckSubmitted(request.spec()); !s.ok()) return reply(s);
  manager_->Submit(request.spec(), std::move(reply), tenant);
}

void JobApi::Solve(const std::string& tenant, const v1::SubmitJobRequest& request, WatchReply reply) {
  if (absl::Status s = CheckSubmitted(request.spec()); !s.ok()) return reply(s);
  manager_->Submit(
      request.spec(),
      [manager = manager_, tenant, reply = std::move(reply)](absl::StatusOr<v1::Job> job) {
        reply(job.ok() ? manager->Watch(job->id(), tenant) : job.status());
      },
      tenant);
}

absl::StatusOr<std::shared_ptr<JobWatch>> JobApi::Watch(const std::string& tenant, const v1::WatchJobRequest& request) {
  return manager_->Watch(request.job_id(), tenant);
}

absl::StatusOr<v1::Job> JobApi::Get(const std::string& tenant, const v1::GetJobRequest& request) {
  return manager_->Get(request.job_id(), tenant);
}

void JobApi::Cancel(const std::string& tenant, const v1::CancelJobRequest& request, JobReply reply) {
  absl::StatusOr<v1::Job> job = manager_->Cancel(request.job_id(), tenant);
  if (!job.ok() || job->state() != v1::JOB_STATE_RUNNING) {
    reply(std::move(job));
    return;
  }
  auto shared = std::make_shared<JobReply>(std::move(reply));
  const absl::Status waiting =
      manager_->WhenFinished(request.job_id(), kCancelWait, [shared](const v1::Job& now) { (*shared)(now); });
  if (!waiting.ok()) (*shared)(waiting);
}

absl::Status JobApi::Delete(const std::string& tenant, const v1::DeleteJobRequest& request) {
  return manager_->Delete(request.job_id(), tenant);
}

void JobApi::Retry(const std::string& tenant, const v1::RetryJobRequest& request, JobReply reply) {
  absl::StatusOr<v1::Job> old = manager_->Get(request.job_id(), tenant);
  if (!old.ok()) return reply(old.status());
  absl::StatusOr<v1::JobSpec> spec = RetrySpec(*old, request);
  if (!spec.ok()) return reply(spec.status());
  manager_->Submit(*spec, std::move(reply), tenant);
}

absl::StatusOr<v1::ListJobsResponse> JobApi::List(const std::string& tenant, const v1::ListJobsRequest& request) {
  int64_t before = 0;
  const std::string& token = request.page_token();
  if (token.size() > kMaxPageTokenBytes) {
    return absl::InvalidArgumentError("page_token is not one this service gave (too long)");
  }
  if (!token.empty()) {
    absl::StatusOr<int64_t> position = page_tokens_.Open(tenant, token);
    if (!position.ok()) return position.status();
    before = *position;
  }
  if (request.page_size() < 0 || request.page_size() > kMaxPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("page_size must be between 0 and ", kMaxPageSize));
  }
  std::vector<v1::JobState> states;
  for (int s : request.states()) states.push_back(static_cast<v1::JobState>(s));
  const std::map<std::string, std::string> labels(request.labels().begin(), request.labels().end());
  absl::StatusOr<JobStore::Page> page =
      manager_->List(tenant, states, labels, request.page_size() == 0 ? kDefaultPageSize : request.page_size(), before);
  if (!page.ok()) return page.status();
  v1::ListJobsResponse response;
  for (v1::Job& job : page->jobs) *response.add_jobs() = std::move(job);
  if (page->next_before != 0) response.set_next_page_token(page_tokens_.Seal(tenant, page->next_before));
  return response;
}

}  // namespace npuzzle
