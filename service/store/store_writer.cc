#include "service/store/store_writer.h"

#include <utility>

namespace npuzzle {

StoreWriter::StoreWriter(JobStore* store, Completions completions)
    : store_(store), completions_(std::move(completions)) {
  thread_ = std::thread([this] { Run(); });
}

StoreWriter::~StoreWriter() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void StoreWriter::Append(std::vector<Write> writes) {
  absl::MutexLock lock(&mu_);
  for (Write& w : writes) {
    pending_.push_back(std::move(w.change));
    pending_done_.push_back(std::move(w.done));
  }
}

void StoreWriter::WaitIdle() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](StoreWriter* w) ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->pending_.empty() && !w->busy_; }, this));
}

void StoreWriter::Run() {
  std::vector<JobStore::Change> batch;
  std::vector<Done> done;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      busy_ = false;
      mu_.Await(absl::Condition(
          +[](StoreWriter* w) ABSL_NO_THREAD_SAFETY_ANALYSIS { return !w->pending_.empty() || w->stopping_; }, this));
      if (pending_.empty()) return;
      batch.swap(pending_);
      done.swap(pending_done_);
      busy_ = true;
    }
    const std::vector<absl::Status> outcomes = store_->Commit(batch);
    completions_(done, outcomes);
    batch.clear();
    done.clear();
  }
}

}  // namespace npuzzle
