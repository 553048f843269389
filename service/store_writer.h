// StoreWriter: the one path by which job changes reach the job store.
// Changes appended while a commit is under way wait for it to end and are
// then committed together, in one transaction and one sync (group commit,
// as LevelDB batches its writers), so the sync's cost is shared by every
// change waiting for it. As in LevelDB, there is no writer thread: the
// first caller of Commit that finds no commit under way leads, committing
// batch after batch until nothing is left, and the others return at once.
// No one waits for the disk while holding a lock of their own: a change's
// completion runs once its commit is durable (or has failed).
#ifndef NPUZZLE_SERVICE_STORE_WRITER_H_
#define NPUZZLE_SERVICE_STORE_WRITER_H_

#include <functional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "service/job_store.h"

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
  // need: once per batch, not once per write. Completions may append.
  using Completions = std::function<void(std::vector<Done>& done, const std::vector<absl::Status>& outcomes)>;

  StoreWriter(JobStore* store, Completions completions) : store_(store), completions_(std::move(completions)) {}
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Writes appended in one call commit in one transaction, in order, after
  // everything appended before them. Appending under one's own lock keeps
  // the order of one's changes.
  void Append(std::vector<Write> writes);

  // Commits what is appended, on this thread, unless another thread is
  // committing already (it takes these too). Call holding no lock the
  // completions take.
  void Commit();

  // Returns once nothing is appended, being committed, or having its
  // completions run.
  void WaitIdle();

 private:
  JobStore* const store_;
  const Completions completions_;
  absl::Mutex mu_;
  std::vector<JobStore::Change> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<Done> pending_done_ ABSL_GUARDED_BY(mu_);
  bool leading_ ABSL_GUARDED_BY(mu_) = false;  // a thread is committing
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_WRITER_H_
