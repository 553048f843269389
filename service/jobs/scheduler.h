// Scheduler: who runs what. It hands queued jobs, and units of running
// split jobs, to workers with free slots; follows each assignment as a
// lease (service/workers/worker_pool.h); and takes each lease's end: a
// result, a release, a lost worker, a job kept across a coordinator
// restart. Every change of a job's state it causes goes through the
// JobLifecycle. Not thread-safe: the job manager calls it under its lock.
//
// Why one final result per job: a worker's result counts only for the
// attempt the job is on and only from the worker that attempt went to;
// any other (a lost attempt's, a repeat) is ignored. Why attempt numbers
// are never reused: see Assign.
#ifndef NPUZZLE_SERVICE_JOBS_SCHEDULER_H_
#define NPUZZLE_SERVICE_JOBS_SCHEDULER_H_

#include <functional>
#include <string>

#include "absl/time/time.h"
#include "npuzzle/v1/worker.pb.h"
#include "service/jobs/job_lifecycle.h"
#include "service/jobs/manager_metrics.h"
#include "service/jobs/tenant_quota.h"
#include "service/split/split_jobs.h"
#include "service/workers/lease.h"
#include "service/workers/worker_pool.h"

namespace npuzzle {

class Scheduler {
 public:
  struct Options {
    int max_lost_attempts = 3;  // a job fails once its worker vanished this often
    std::function<TenantQuota(const std::string& tenant)> quota_of;
  };

  Scheduler(JobLifecycle* lifecycle, WorkerPool* workers, SplitJobs* splits, ManagerMetrics* metrics, Options options)
      : lifecycle_(lifecycle), workers_(workers), splits_(splits), metrics_(metrics), options_(std::move(options)) {}

  // Gives free slots work: units of running split jobs first where their
  // priority is no lower than the best queued job's, then queued jobs in
  // the queue's order, skipping tenants at their running quota.
  void Dispatch(absl::Time now);

  // A worker has (re)connected: its undelivered results count, the jobs
  // it still runs at their current attempt are its again, and it is told
  // to stop any other.
  void Reconnected(Worker& w, const v1::WorkerHello& hello);
  void Finished(Worker& w, const v1::JobFinished& f);
  void Released(Worker& w, const v1::JobReleased& released);
  // The worker is gone: its jobs go back to the queue, counted as lost,
  // and its units go out again.
  void Lost(WorkerLink* link);

  // A client's cancel: a queued job, or one spread over workers, ends now;
  // one running on a worker is asked to stop, and ends when it has.
  void Cancel(JobRecord& r);

  // Whether `w` holds `lease` at `attempt`.
  bool Holds(const Worker& w, const LeaseKey& lease, int attempt);
  // The unfinished job `w` runs whole at `attempt`, or null.
  JobRecord* Assigned(const Worker& w, const std::string& job_id, int attempt);

 private:
  // Gives the job to `w` (`adopted`: `w` already runs it at its attempt).
  void Assign(JobRecord& r, Worker& w, bool adopted);
  void AssignmentStored(const std::string& id, int attempt, bool adopted, bool sent, const absl::Status& stored);
  void SendAssignment(const JobRecord& r, Worker& w);
  // Back to the queue; `lost` counts against the job. A job a client
  // asked to cancel ends instead.
  void Requeue(JobRecord& r, bool lost);
  // Counts a lost worker against the job: false, with the job failed, once
  // that has happened too often.
  bool CountLoss(JobRecord& r);

  // An assignment the store could not record (a full disk, an I/O error)
  // pauses all assignments, for a second doubling to half a minute while
  // it keeps failing: retried at once, every job would go round queue,
  // worker and cancel as fast as the store fails, its attempt number
  // climbing each time. Logged once when it starts and once when it ends.
  void StorePaused(const absl::Status& why);
  void StoreWritable();

  JobLifecycle* const lifecycle_;
  WorkerPool* const workers_;
  SplitJobs* const splits_;
  ManagerMetrics* const metrics_;
  const Options options_;
  absl::Duration store_pause_ = absl::ZeroDuration();
  absl::Time paused_until_ = absl::InfinitePast();
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_SCHEDULER_H_
