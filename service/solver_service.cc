#include "service/solver_service.h"

#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "service/grpc_status.h"
#include "service/input_bounds.h"

namespace npuzzle {
namespace {

constexpr int kDefaultPageSize = 50;
constexpr int kMaxPageSize = 1000;
// How long CancelJob waits for a running job to stop before answering.
constexpr absl::Duration kCancelWait = absl::Seconds(2);

grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpc(status));
  return reactor;
}

// A unary call that ends with a job, answered from whichever thread the
// job manager calls back on. gRPC destroys the response on one of its own
// threads after OnDone; it orders that after Finish, but in code no race
// detector sees. Filling the response under mu_, which OnDone then takes,
// makes the order visible.
class JobAnswer : public grpc::ServerUnaryReactor {
 public:
  explicit JobAnswer(v1::Job* response) : response_(response) {}

  void Send(absl::StatusOr<v1::Job> job) {
    {
      absl::MutexLock lock(&mu_);
      if (job.ok()) *response_ = *std::move(job);
    }
    Finish(ToGrpc(job.status()));
  }

  void OnDone() override {
    mu_.Lock();
    mu_.Unlock();
    delete this;
  }

 private:
  absl::Mutex mu_;
  v1::Job* const response_ ABSL_PT_GUARDED_BY(mu_);
};

// Streams one JobWatch to a client, from the moment Begin gives it one.
// The manager's pushes and Solve's submission answer reach it through a
// shared cell that outlives the reactor, so either racing with the end of
// the call finds nothing to wake rather than a deleted object.
class WatchWriter : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  struct Cell {
    absl::Mutex mu;
    WatchWriter* writer ABSL_GUARDED_BY(mu) = nullptr;
  };

  WatchWriter() : cell_(std::make_shared<Cell>()) {
    absl::MutexLock lock(&cell_->mu);
    cell_->writer = this;
  }

  // Begins `watch` on whichever writer the cell still holds.
  static void Begin(const std::shared_ptr<Cell>& cell, absl::StatusOr<std::shared_ptr<JobWatch>> watch) {
    absl::MutexLock lock(&cell->mu);
    if (cell->writer != nullptr) cell->writer->Begin(std::move(watch));
  }
  std::shared_ptr<Cell> cell() const { return cell_; }

  // Either starts streaming `watch` or, with an error, ends at once.
  void Begin(absl::StatusOr<std::shared_ptr<JobWatch>> watch) {
    if (!watch.ok()) {
      End(ToGrpc(watch.status()));
      return;
    }
    std::shared_ptr<JobWatch> w = *std::move(watch);
    {
      absl::MutexLock lock(&mu_);
      watch_ = w;
    }
    w->SetWakeup([cell = cell_] {
      absl::MutexLock lock(&cell->mu);
      if (cell->writer != nullptr) cell->writer->Pump();
    });
    Pump();
  }

  void OnWriteDone(bool ok) override {
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
    }
    if (!ok) {
      End(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
      return;
    }
    Pump();
  }

  // The client left while nothing was being written.
  void OnCancel() override {
    bool finish;
    {
      absl::MutexLock lock(&mu_);
      finish = !writing_ && !finished_;
    }
    if (finish) End(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&cell_->mu);
      cell_->writer = nullptr;
    }
    std::shared_ptr<JobWatch> watch;
    {
      absl::MutexLock lock(&mu_);
      watch = watch_;
    }
    if (watch) watch->Abandon();
    delete this;
  }

 private:
  void End(const grpc::Status& status) {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      finished_ = true;
    }
    Finish(status);
  }

  // Sends the next waiting event unless a write is under way. The last
  // one goes out with the call's status, in one step. The write starts
  // under mu_ (gRPC serializes the event before returning and never runs
  // OnWriteDone inline) so that a race detector sees the serialization
  // happen before the next event overwrites current_.
  void Pump() {
    absl::MutexLock lock(&mu_);
    if (watch_ == nullptr || writing_ || finished_ || last_sent_) return;
    std::optional<v1::JobEvent> next = watch_->Next(&last_sent_);
    if (!next) return;
    current_ = *std::move(next);
    writing_ = !last_sent_;
    finished_ = last_sent_;
    if (last_sent_) {
      StartWriteAndFinish(&current_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      StartWrite(&current_);
    }
  }

  const std::shared_ptr<Cell> cell_;
  absl::Mutex mu_;
  std::shared_ptr<JobWatch> watch_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool last_sent_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  v1::JobEvent current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::string> SolverServiceImpl::Caller(grpc::CallbackServerContext* context) {
  if (tokens_ == nullptr) return std::string();
  const auto& metadata = context->client_metadata();
  const auto it = metadata.find("authorization");
  if (it == metadata.end()) return tokens_->TenantOf(nullptr);
  const std::string value(it->second.data(), it->second.size());
  return tokens_->TenantOf(&value);
}

grpc::ServerUnaryReactor* SolverServiceImpl::SubmitJob(grpc::CallbackServerContext* context,
                                                       const v1::SubmitJobRequest* request, v1::Job* response) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  auto* answer = new JobAnswer(response);
  manager_->Submit(
      request->spec(), [answer](absl::StatusOr<v1::Job> job) { answer->Send(std::move(job)); }, *tenant);
  return answer;
}

grpc::ServerWriteReactor<v1::JobEvent>* SolverServiceImpl::WatchJob(grpc::CallbackServerContext* context,
                                                                    const v1::WatchJobRequest* request) {
  auto* writer = new WatchWriter;
  const absl::StatusOr<std::string> tenant = Caller(context);
  writer->Begin(tenant.ok() ? manager_->Watch(request->job_id(), *tenant) : tenant.status());
  return writer;
}

grpc::ServerWriteReactor<v1::JobEvent>* SolverServiceImpl::Solve(grpc::CallbackServerContext* context,
                                                                 const v1::SubmitJobRequest* request) {
  auto* writer = new WatchWriter;
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) {
    writer->Begin(tenant.status());
    return writer;
  }
  manager_->Submit(
      request->spec(),
      [manager = manager_, cell = writer->cell(), tenant = *tenant](absl::StatusOr<v1::Job> job) {
        WatchWriter::Begin(cell, job.ok() ? manager->Watch(job->id(), tenant) : job.status());
      },
      *tenant);
  return writer;
}

grpc::ServerUnaryReactor* SolverServiceImpl::GetJob(grpc::CallbackServerContext* context,
                                                    const v1::GetJobRequest* request, v1::Job* response) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  absl::StatusOr<v1::Job> job = manager_->Get(request->job_id(), *tenant);
  if (job.ok()) *response = *std::move(job);
  return Answer(context, job.status());
}

grpc::ServerUnaryReactor* SolverServiceImpl::CancelJob(grpc::CallbackServerContext* context,
                                                       const v1::CancelJobRequest* request, v1::Job* response) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  absl::StatusOr<v1::Job> job = manager_->Cancel(request->job_id(), *tenant);
  if (!job.ok() || job->state() != v1::JOB_STATE_RUNNING) {
    if (job.ok()) *response = *std::move(job);
    return Answer(context, job.status());
  }
  // Answer once the worker has stopped it (or the wait runs out).
  auto* answer = new JobAnswer(response);
  const absl::Status waiting =
      manager_->WhenFinished(request->job_id(), kCancelWait, [answer](const v1::Job& now) { answer->Send(now); });
  if (!waiting.ok()) answer->Send(waiting);
  return answer;
}

grpc::ServerUnaryReactor* SolverServiceImpl::ListJobs(grpc::CallbackServerContext* context,
                                                      const v1::ListJobsRequest* request,
                                                      v1::ListJobsResponse* response) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  int64_t before = 0;
  if (!request->page_token().empty() && (request->page_token().size() > kMaxPageTokenBytes ||
                                         !absl::SimpleAtoi(request->page_token(), &before) || before <= 0)) {
    return Answer(context,
                  absl::InvalidArgumentError(
                      request->page_token().size() > kMaxPageTokenBytes
                          ? std::string("page_token is not one this service gave (too long)")
                          : absl::StrCat("page_token '", request->page_token(), "' is not one this service gave")));
  }
  if (request->page_size() < 0 || request->page_size() > kMaxPageSize) {
    return Answer(context, absl::InvalidArgumentError(absl::StrCat("page_size must be between 0 and ", kMaxPageSize)));
  }
  std::vector<v1::JobState> states;
  for (int s : request->states()) states.push_back(static_cast<v1::JobState>(s));
  const std::map<std::string, std::string> labels(request->labels().begin(), request->labels().end());
  absl::StatusOr<JobStore::Page> page = manager_->List(
      *tenant, states, labels, request->page_size() == 0 ? kDefaultPageSize : request->page_size(), before);
  if (page.ok()) {
    for (v1::Job& job : page->jobs) *response->add_jobs() = std::move(job);
    if (page->next_before != 0) response->set_next_page_token(absl::StrCat(page->next_before));
  }
  return Answer(context, page.status());
}

}  // namespace npuzzle
