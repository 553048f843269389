// StoreWriter: the one path by which job changes reach the job store. Its
// thread takes every change appended while the previous commit was under
// way and commits them together, in one transaction and one sync (group
// commit, as LevelDB batches its writers), so the sync's cost is shared by
// every change waiting for it. No caller ever waits for the disk while
// holding a lock of its own: a change's completion runs once its commit is
// durable (or has failed). The commit runs on a thread of its own rather
// than on the caller's (LevelDB's leader), so that the caller goes on to
// what it must do meanwhile, such as sending a worker its assignment.
//
// Two threads take turns: while one runs a batch's completions (which
// wake watchers and write to their streams), the other may already be
// committing the next batch, so a change that came in meanwhile does not
// wait for the completions to reach the disk. Commits never overlap, and
// completions run one batch at a time in commit order (a ticket each), so
// callers see exactly what one thread would have shown them.
#ifndef NPUZZLE_SERVICE_STORE_STORE_WRITER_H_
#define NPUZZLE_SERVICE_STORE_STORE_WRITER_H_

#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "service/store/job_store.h"

namespace npuzzle {

class StoreWriter {
 public:
  using Done = std::function<void(const absl::Status&)>;
  struct Write {
    JobStore::Change change;
    Done done;  // runs with the change's outcome, after its commit
  };
  // Receives each committed batch's completions with their outcomes, in
  // the order they were appended, and runs them under whatever lock they
  // need: once per batch, not once per write.
  using Completions = std::function<void(std::vector<Done>& done, const std::vector<absl::Status>& outcomes)>;

  StoreWriter(JobStore* store, Completions completions);
  // Commits whatever was appended, then stops.
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Writes appended in one call commit in one transaction, in order, after
  // everything appended before them.
  void Append(std::vector<Write> writes);

  // Returns once nothing is appended, being committed, or having its
  // completions run: whatever the completions appended included.
  void WaitIdle();

 private:
  void Run();

  JobStore* const store_;
  const Completions completions_;
  absl::Mutex mu_;
  std::vector<JobStore::Change> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<Done> pending_done_ ABSL_GUARDED_BY(mu_);
  bool committing_ ABSL_GUARDED_BY(mu_) = false;
  int64_t batches_taken_ ABSL_GUARDED_BY(mu_) = 0;      // tickets handed out
  int64_t batches_completed_ ABSL_GUARDED_BY(mu_) = 0;  // completions run
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread threads_[2];
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_STORE_WRITER_H_
