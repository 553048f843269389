#include "service/api/solver_service.h"

#include <memory>

#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"

namespace npuzzle {
namespace {

grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpc(status));
  return reactor;
}

// A unary call that ends with a job, answered from whichever thread the
// job manager calls back on.
class JobAnswer : public grpc::ServerUnaryReactor {
 public:
  explicit JobAnswer(v1::Job* response) : response_(response) {}

  void Send(absl::StatusOr<v1::Job> job) {
    if (job.ok()) *response_ = *std::move(job);
    Finish(ToGrpc(job.status()));
  }

  void OnDone() override { delete this; }

 private:
  v1::Job* const response_;
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
  const auto& metadata = context->client_metadata();
  const auto it = metadata.find("authorization");
  if (it == metadata.end()) return api_->Authenticate(nullptr);
  const std::string value(it->second.data(), it->second.size());
  return api_->Authenticate(&value);
}

grpc::ServerUnaryReactor* SolverServiceImpl::SubmitJob(grpc::CallbackServerContext* context,
                                                       const v1::SubmitJobRequest* request, v1::Job* response) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  auto* answer = new JobAnswer(response);
  api_->Submit(*tenant, *request, [answer](absl::StatusOr<v1::Job> job) { answer->Send(std::move(job)); });
  return answer;
}

grpc::ServerWriteReactor<v1::JobEvent>* SolverServiceImpl::WatchJob(grpc::CallbackServerContext* context,
                                                                    const v1::WatchJobRequest* request) {
  auto* writer = new WatchWriter;
  const absl::StatusOr<std::string> tenant = Caller(context);
  writer->Begin(tenant.ok() ? api_->Watch(*tenant, *request) : tenant.status());
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
  api_->Solve(*tenant, *request, [cell = writer->cell()](absl::StatusOr<std::shared_ptr<JobWatch>> watch) {
    WatchWriter::Begin(cell, std::move(watch));
  });
  return writer;
}

grpc::ServerUnaryReactor* SolverServiceImpl::GetJob(grpc::CallbackServerContext* context,
                                                    const v1::GetJobRequest* request, v1::Job* response) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  absl::StatusOr<v1::Job> job = api_->Get(*tenant, *request);
  if (job.ok()) *response = *std::move(job);
  return Answer(context, job.status());
}

grpc::ServerUnaryReactor* SolverServiceImpl::CancelJob(grpc::CallbackServerContext* context,
                                                       const v1::CancelJobRequest* request, v1::Job* response) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  auto* answer = new JobAnswer(response);
  api_->Cancel(*tenant, *request, [answer](absl::StatusOr<v1::Job> job) { answer->Send(std::move(job)); });
  return answer;
}

grpc::ServerUnaryReactor* SolverServiceImpl::RetryJob(grpc::CallbackServerContext* context,
                                                      const v1::RetryJobRequest* request, v1::Job* response) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  auto* answer = new JobAnswer(response);
  api_->Retry(*tenant, *request, [answer](absl::StatusOr<v1::Job> job) { answer->Send(std::move(job)); });
  return answer;
}

grpc::ServerUnaryReactor* SolverServiceImpl::DeleteJob(grpc::CallbackServerContext* context,
                                                       const v1::DeleteJobRequest* request, v1::DeleteJobResponse*) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  return Answer(context, api_->Delete(*tenant, *request));
}

grpc::ServerUnaryReactor* SolverServiceImpl::ListJobs(grpc::CallbackServerContext* context,
                                                      const v1::ListJobsRequest* request,
                                                      v1::ListJobsResponse* response) {
  const absl::StatusOr<std::string> tenant = Caller(context);
  if (!tenant.ok()) return Answer(context, tenant.status());
  absl::StatusOr<v1::ListJobsResponse> list = api_->List(*tenant, *request);
  if (list.ok()) *response = *std::move(list);
  return Answer(context, list.status());
}

}  // namespace npuzzle
