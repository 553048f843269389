#include "service/store/store_writer.h"

#include <utility>

namespace npuzzle {

StoreWriter::StoreWriter(JobStore* store, Completions completions)
    : store_(store), completions_(std::move(completions)) {
  for (std::thread& t : threads_) t = std::thread([this] { Run(); });
}

StoreWriter::~StoreWriter() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
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
      +[](StoreWriter* w)
           ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->pending_.empty() && w->batches_completed_ == w->batches_taken_; },
      this));
}

void StoreWriter::Run() {
  std::vector<JobStore::Change> batch;
  std::vector<Done> done;
  for (;;) {
    int64_t ticket;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](StoreWriter* w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return (!w->pending_.empty() && !w->committing_) || (w->pending_.empty() && w->stopping_);
          },
          this));
      if (pending_.empty()) return;
      batch.swap(pending_);
      done.swap(pending_done_);
      committing_ = true;
      ticket = batches_taken_++;
    }
    const std::vector<absl::Status> outcomes = store_->Commit(batch);
    {
      absl::MutexLock lock(&mu_);
      committing_ = false;
      auto my_turn = [this, ticket]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return batches_completed_ == ticket; };
      mu_.Await(absl::Condition(&my_turn));
    }
    completions_(done, outcomes);
    {
      absl::MutexLock lock(&mu_);
      ++batches_completed_;
    }
    batch.clear();
    done.clear();
  }
}

}  // namespace npuzzle
