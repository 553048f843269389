#include "service/store_writer.h"

#include <utility>

namespace npuzzle {

void StoreWriter::Append(std::vector<Write> writes) {
  absl::MutexLock lock(&mu_);
  for (Write& w : writes) {
    pending_.push_back(std::move(w.change));
    pending_done_.push_back(std::move(w.done));
  }
}

void StoreWriter::Commit() {
  bool led = false;
  for (;;) {
    std::vector<JobStore::Change> batch;
    std::vector<Done> done;
    {
      absl::MutexLock lock(&mu_);
      if (led) leading_ = false;
      if (leading_ || pending_.empty()) return;
      leading_ = led = true;
      batch.swap(pending_);
      done.swap(pending_done_);
    }
    const std::vector<absl::Status> outcomes = store_->Commit(batch);
    completions_(done, outcomes);
  }
}

void StoreWriter::WaitIdle() {
  Commit();
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](StoreWriter* w) ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->pending_.empty() && !w->leading_; }, this));
}

}  // namespace npuzzle
