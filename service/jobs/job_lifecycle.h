// JobLifecycle: the one place a job's state changes. It holds the records
// of the unfinished jobs and the queue of those waiting, applies each
// change only where the transition table (jobspec/job_state.h) allows it,
// queues the job's new row for the store writer, and tells the job's
// watchers once that row is durable, never before.
//
// Why nothing is reported ahead of the disk: a change reaches watchers in
// its write's completion, and completions run in the order the writes
// were made, so watchers see the stored sequence of states and nothing a
// crash could take back. A final state is reported, and the job
// forgotten, only once stored; if it cannot be stored the job is not
// final, and waits in the queue to run again.
//
// Why the queue lives here: a job is in the queue exactly while its state
// is QUEUED (and it is not ending), and keeping both in one place is what
// makes that hold. Not thread-safe: the job manager calls it under its
// lock, and the completions it hands the writer run under that lock too.
#ifndef NPUZZLE_SERVICE_JOBS_JOB_LIFECYCLE_H_
#define NPUZZLE_SERVICE_JOBS_JOB_LIFECYCLE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "jobspec/job_state.h"
#include "service/jobs/job_events.h"
#include "service/jobs/job_queue.h"
#include "service/jobs/job_record.h"
#include "service/jobs/manager_metrics.h"
#include "service/store/job_store.h"
#include "service/store/store_writer.h"

namespace npuzzle {

class JobLifecycle {
 public:
  // Runs under the manager's lock once a change's row is durable, or with
  // the error when it could not be stored.
  using Stored = std::function<void(const absl::Status&)>;

  struct Hooks {
    // Called as a job ends, before its final row is queued: whatever still
    // works on it must stop (a split job's units).
    std::function<void(JobRecord&)> ending;
    // Runs `call` once the manager's lock is released (a waiter's call).
    std::function<void(std::function<void()>)> later;
  };

  JobLifecycle(JobEvents* events, ManagerMetrics* metrics, Hooks hooks)
      : events_(events), metrics_(metrics), hooks_(std::move(hooks)) {}

  JobRecord* Find(const std::string& id);
  JobQueue& queue() { return queue_; }
  template <class F>
  void ForEach(F f) const {
    for (const auto& [id, r] : records_) f(r);
  }

  // The unfinished jobs of a store being reopened. Running ones go back to
  // the queue (the write of that is `stored`'s), not to be handed out
  // before `resume`, and are marked unclaimed: their workers may still
  // have them.
  void Reload(std::vector<JobStore::Row> rows, absl::Time resume, Stored stored);

  // A new job at `seq`: queued (kAdmit), or, if it was decided at once
  // (state DONE), final (kDecide). `stored` runs first when its row is
  // durable or has failed; a job whose row failed is forgotten after it.
  JobRecord& Admit(v1::Job job, int64_t seq, Stored stored);

  // kStart: running on `worker` (empty for a job spread over workers) at
  // `attempt`, or, `adopted`, as it already is on that worker. False if
  // the table refused it.
  bool Start(JobRecord& r, const std::string& worker, int attempt, bool adopted, Stored stored);

  // kRequeue: back to the queue, because its worker was lost (the caller
  // counts that against the job) or let it go, or its start could not be
  // stored.
  enum class Requeued { kLost, kReleased, kNotStored };
  void Requeue(JobRecord& r, Requeued why);

  // kFinish, kFail or kCancel: the job's final row (with `result` or
  // `error`), stored first, then reported, then forgotten.
  void End(JobRecord& r, JobChange change, const v1::Result* result, const std::string& error);

  // A stored change that is no change of state (a checkpoint): watchers
  // are not told.
  void Record(const JobRecord& r);

  // Forgets a job whose first row never reached the store.
  void Forget(const std::string& id);

  // The writes queued since the last call, in the order they were made.
  std::vector<StoreWriter::Write> TakeWrites();

  // Changes the table refused (a defect somewhere; the invariants report it).
  int refused() const { return refused_; }

 private:
  // Moves the job to the state `change` leads to; false, changing nothing,
  // if the table has no such transition.
  bool Apply(JobRecord& r, JobChange change);
  // Queues the row `job` (new at `seq`, or a replacement), then `stored`.
  void Write(const v1::Job& job, int64_t seq, Stored stored);
  // Queues `job`'s row; once durable its watchers hear of it.
  void WriteAndTell(const v1::Job& job, Stored stored = nullptr);
  void FinalStored(const std::string& id, const absl::Status& stored);

  JobEvents* const events_;
  ManagerMetrics* const metrics_;
  const Hooks hooks_;
  absl::flat_hash_map<std::string, JobRecord> records_;
  JobQueue queue_;
  std::vector<StoreWriter::Write> writes_;
  int refused_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_JOB_LIFECYCLE_H_
