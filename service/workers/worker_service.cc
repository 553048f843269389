#include "service/workers/worker_service.h"

#include <deque>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"

namespace npuzzle {
namespace {

class Session;

// What the manager holds: it may outlive the session, and then does
// nothing.
class SessionLink : public WorkerLink {
 public:
  explicit SessionLink(Session* session) : session_(session) {}
  void Send(const v1::CoordinatorMessage& message) override;
  void Close(const std::string& why) override;
  void Detach() {
    absl::MutexLock lock(&mu_);
    session_ = nullptr;
  }

 private:
  absl::Mutex mu_;
  Session* session_ ABSL_GUARDED_BY(mu_);
};

class Session : public grpc::ServerBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage> {
 public:
  explicit Session(JobManager* manager) : manager_(manager), link_(std::make_shared<SessionLink>(this)) {
    StartRead(&incoming_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      End(grpc::Status::OK);
      return;
    }
    if (!greeted_) {
      if (!incoming_.has_hello() || incoming_.hello().worker_id().empty()) {
        End(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the first message must be a hello with a worker id"));
        return;
      }
      if (absl::Status s = manager_->Connected(link_, incoming_.hello()); !s.ok()) {
        Log(absl::StrCat("refused worker from ", incoming_.hello().host(), ": ", s.message()));
        End(grpc::Status(grpc::StatusCode::ALREADY_EXISTS, std::string(s.message())));
        return;
      }
      greeted_ = true;
    } else {
      manager_->Received(link_.get(), incoming_);
    }
    StartRead(&incoming_);
  }

  // The message being written stays at the front of the deque, whose
  // elements keep their addresses while others are added behind them.
  // StartWrite serializes it before returning, and is called under mu_ so
  // that the serialization visibly happens before OnWriteDone destroys the
  // message; gRPC orders the two too, but inside code no race detector
  // sees. gRPC never runs OnWriteDone inline in StartWrite, so holding mu_
  // here cannot deadlock.
  void Enqueue(const v1::CoordinatorMessage& message) {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    outbox_.push_back(message);
    if (writing_) return;
    writing_ = true;
    StartWrite(&outbox_.front());
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    outbox_.pop_front();
    if (!ok || finished_ || outbox_.empty()) {
      writing_ = false;
      return;
    }
    StartWrite(&outbox_.front());
  }

  void End(const grpc::Status& status) {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      finished_ = true;
    }
    Finish(status);
  }

  void OnDone() override {
    link_->Detach();
    if (greeted_) manager_->Disconnected(link_.get());
    delete this;
  }

 private:
  JobManager* const manager_;
  const std::shared_ptr<SessionLink> link_;
  v1::WorkerMessage incoming_;
  bool greeted_ = false;  // touched only by the read chain
  absl::Mutex mu_;
  std::deque<v1::CoordinatorMessage> outbox_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

void SessionLink::Send(const v1::CoordinatorMessage& message) {
  absl::MutexLock lock(&mu_);
  if (session_ != nullptr) session_->Enqueue(message);
}

void SessionLink::Close(const std::string& why) {
  absl::MutexLock lock(&mu_);
  if (session_ != nullptr) session_->End(grpc::Status(grpc::StatusCode::UNAVAILABLE, why));
}

}  // namespace

grpc::ServerBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage>* WorkerServiceImpl::Connect(
    grpc::CallbackServerContext*) {
  return new Session(manager_);
}

}  // namespace npuzzle
