// JobApi: the public API's rules, whatever the transport. It names the
// caller's tenant from the authorization a request carries, checks what
// only the API layer knows (page sizes and tokens), and answers from the
// job manager. The gRPC and HTTP front ends translate to and from it and
// decide nothing themselves, so a rule is written once and both obey it.
#ifndef NPUZZLE_SERVICE_API_JOB_API_H_
#define NPUZZLE_SERVICE_API_JOB_API_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "npuzzle/v1/solver.pb.h"
#include "service/api/page_token.h"
#include "service/api/token_book.h"
#include "service/jobs/job_manager.h"
#include "service/jobs/job_watch.h"

namespace npuzzle {

class JobApi {
 public:
  static constexpr int kDefaultPageSize = 50;
  static constexpr int kMaxPageSize = 1000;

  using JobReply = std::function<void(absl::StatusOr<v1::Job>)>;
  using WatchReply = std::function<void(absl::StatusOr<std::shared_ptr<JobWatch>>)>;

  // `tokens` null: no authentication, every caller is the unnamed tenant.
  // `store_secret` keys the page tokens (JobStore::Secret).
  JobApi(JobManager* manager, TokenBook* tokens, const std::string& store_secret)
      : manager_(manager), tokens_(tokens), page_tokens_(store_secret) {}

  // The tenant an "authorization" value ("Bearer TOKEN"; null: none was
  // sent) names, or UNAUTHENTICATED saying what is wrong.
  absl::StatusOr<std::string> Authenticate(const std::string* authorization);

  // Replies may come on another thread, or on this one before returning.
  void Submit(const std::string& tenant, const v1::SubmitJobRequest& request, JobReply reply);
  // Submit, then a watch of the job it made.
  void Solve(const std::string& tenant, const v1::SubmitJobRequest& request, WatchReply reply);
  absl::StatusOr<std::shared_ptr<JobWatch>> Watch(const std::string& tenant, const v1::WatchJobRequest& request);
  absl::StatusOr<v1::Job> Get(const std::string& tenant, const v1::GetJobRequest& request);
  // A running job is answered once its worker has stopped it, or after a
  // short wait if it has not.
  void Cancel(const std::string& tenant, const v1::CancelJobRequest& request, JobReply reply);
  absl::StatusOr<v1::ListJobsResponse> List(const std::string& tenant, const v1::ListJobsRequest& request);
  absl::Status Delete(const std::string& tenant, const v1::DeleteJobRequest& request);
  void Retry(const std::string& tenant, const v1::RetryJobRequest& request, JobReply reply);

 private:
  JobManager* const manager_;
  TokenBook* const tokens_;
  const PageTokens page_tokens_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_JOB_API_H_
