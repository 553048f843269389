// JobManager: the coordinator's model of jobs and workers, with no network
// code in it, and the one façade the RPC handlers call. It is a thin
// orchestrator: it takes the lock, routes each call or worker message to
// the part that does one thing, and hands the writes they made to the
// store writer. The parts:
//   Admission (admission.h)       what a submitted spec must pass
//   JobLifecycle (job_lifecycle.h) every change of a job's state, by the
//                                 table in jobspec/job_state.h; it holds
//                                 the queue and tells watchers
//   Scheduler (scheduler.h)       who runs what, and each lease's end
//   WorkerPool (workers/)         connected workers and their leases
//   SplitJobs (split/)            jobs spread over workers
//   JobEvents (job_events.h)      watchers and waiters
//   StoreWriter (store/)          group commits of every change
//   ManagerMetrics, LimitPolicy, TenantQuota
//
// Changes are made in memory under the manager's lock and committed by
// the writer after the lock is released, many to one commit. A client
// hears of its job, and watchers get a state, only once it is durable; a
// final state is reported to no one before it is stored. The one thing
// that may run ahead of the disk is an assignment, so that a worker's
// search overlaps the commit (see Scheduler::Assign).
#ifndef NPUZZLE_SERVICE_JOBS_JOB_MANAGER_H_
#define NPUZZLE_SERVICE_JOBS_JOB_MANAGER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "npuzzle/v1/solver.pb.h"
#include "npuzzle/v1/worker.pb.h"
#include "service/jobs/job_events.h"
#include "service/jobs/job_lifecycle.h"
#include "service/jobs/job_watch.h"
#include "service/jobs/limit_policy.h"
#include "service/jobs/manager_metrics.h"
#include "service/jobs/scheduler.h"
#include "service/jobs/tenant_quota.h"
#include "service/split/split_jobs.h"
#include "service/store/job_store.h"
#include "service/store/store_writer.h"
#include "service/workers/worker_pool.h"

namespace npuzzle {

struct ManagerOptions {
  size_t max_queued = 10000;
  int max_lost_attempts = 3;  // a job fails once its worker vanished this often
  absl::Duration lease_timeout = absl::Seconds(10);
  // After a restart, jobs that were running wait this long before being
  // handed out again, so their workers can reconnect and keep them.
  absl::Duration recovery_grace = absl::Seconds(3);
  LimitPolicy limits;
  // Each tenant's quota (unset: none). Called under the manager's lock,
  // so it must not call back into the manager.
  std::function<TenantQuota(const std::string& tenant)> quota_of;
  // Whether /metrics shows each tenant's jobs under its name. Off by
  // default: the endpoint needs no token, and tenant names are the
  // operator's business.
  bool metrics_per_tenant = false;
};

class JobManager {
 public:
  JobManager(JobStore* store, ManagerOptions options);
  ~JobManager();

  // Reloads unfinished jobs from the store (running ones go back to the
  // queue) and starts the housekeeping thread.
  absl::Status Start();

  using Reply = std::function<void(absl::StatusOr<v1::Job>)>;
  // Answers once the job is stored (or refused): the job as it then is,
  // owned by `tenant` (empty: the one tenant of a server without tokens).
  // A request id that names a stored job of the tenant answers that job at
  // once.
  void Submit(const v1::JobSpec& spec, Reply reply, const std::string& tenant = "");
  // The same, waiting for the answer.
  absl::StatusOr<v1::Job> Submit(const v1::JobSpec& spec, const std::string& tenant = "");
  // Get, Cancel and Watch act only on `tenant`'s jobs: another tenant's
  // job is NotFound, exactly as an unknown id is.
  absl::StatusOr<v1::Job> Get(const std::string& id, const std::string& tenant = "");
  // A queued job ends at once (answered once its end is stored); a running
  // one is asked to stop and is returned still running (WhenFinished tells
  // when it has stopped).
  absl::StatusOr<v1::Job> Cancel(const std::string& id, const std::string& tenant = "");
  // A finished job of the tenant's, deleted. FailedPrecondition while it
  // is queued or running (or its end is still being stored).
  absl::Status Delete(const std::string& id, const std::string& tenant = "");
  // Calls `done` with the job once it has finished, or as it stands after
  // `timeout`; at once for finished jobs. NotFound for unknown ids.
  absl::Status WhenFinished(const std::string& id, absl::Duration timeout, std::function<void(const v1::Job&)> done);
  // The job's current state is the watch's first event.
  absl::StatusOr<std::shared_ptr<JobWatch>> Watch(const std::string& id, const std::string& tenant = "");
  absl::StatusOr<JobStore::Page> List(const std::string& tenant, const std::vector<v1::JobState>& states,
                                      const std::map<std::string, std::string>& labels, int page_size, int64_t before);

  // AlreadyExists (naming both hosts) when another live worker process holds
  // the hello's id; the link is then not added.
  absl::Status Connected(std::shared_ptr<WorkerLink> link, const v1::WorkerHello& hello);
  void Received(WorkerLink* link, const v1::WorkerMessage& message);
  void Disconnected(WorkerLink* link);

  // Refuses new jobs (UNAVAILABLE), waits up to `grace` for running jobs
  // to finish, stores what they report, then drops every worker link. Jobs
  // still running stay recorded as running: after a restart their workers
  // have the recovery grace to reconnect and keep them, else they run
  // again.
  void Drain(absl::Duration grace);

  // Returns once every change made before the call is stored and has had
  // its effects (assignments sent, events pushed, answers given).
  void Sync();

  ManagerCounts Counts();

  // What must hold between calls (tests and fuzzers check it): each
  // unfinished job is queued or held by exactly the worker it names, never
  // both; every lease is on a running job of its worker, or a unit out;
  // no change was refused by the transition table. Call after Sync.
  absl::Status CheckInvariants();

  // The coordinator's Prometheus metrics. Scraping calls into the manager,
  // so whatever serves them must stop before the manager is destroyed.
  const Metrics& metrics() const { return metrics_.metrics(); }

 private:
  // The answer to a resubmission whose request id names a stored job of
  // the tenant: that job as it is now, or ALREADY_EXISTS if the spec
  // differs; nullopt when the request id is new.
  std::optional<absl::StatusOr<v1::Job>> Resubmitted(const v1::JobSpec& submitted, const std::string& tenant)
      ABSL_LOCKS_EXCLUDED(mu_);
  TenantQuota QuotaOf(const std::string& tenant) const;

  // The manager's lock for one scope. Leaving it hands the scope's writes
  // to the writer, releases the lock, then runs what was deferred.
  class ABSL_SCOPED_LOCKABLE Locked {
   public:
    explicit Locked(JobManager* m) ABSL_EXCLUSIVE_LOCK_FUNCTION(m->mu_) : m_(m) { m_->mu_.Lock(); }
    ~Locked() ABSL_UNLOCK_FUNCTION() { m_->Unlock(); }
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

   private:
    JobManager* const m_;
  };
  void Unlock() ABSL_UNLOCK_FUNCTION(mu_);
  // Work to do once the lock is released (gRPC completions).
  void Later(std::function<void()> f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { later_.push_back(std::move(f)); }
  // Hands queued writes to the writer; called before the lock is released,
  // so the writer sees changes in the order they were made.
  void HandOff() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The writer's completions for one commit.
  void Committed(std::vector<StoreWriter::Done>& done, const std::vector<absl::Status>& outcomes)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Dispatch() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Progress(const Worker& w, const v1::JobProgress& progress) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Checkpoint(const Worker& w, const v1::JobCheckpoint& checkpoint) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // An unfinished job as a client sees it: with its place in the queue.
  v1::Job AsItStands(const JobRecord& r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void Housekeeping();
  std::vector<WorkerGauges> WorkerSamples();
  std::vector<TenantGauges> TenantSamples();

  JobStore* const store_;
  const ManagerOptions options_;
  ManagerMetrics metrics_;
  JobEvents events_;

  absl::Mutex mu_;
  bool accepting_ ABSL_GUARDED_BY(mu_) = true;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  JobLifecycle lifecycle_ ABSL_GUARDED_BY(mu_);
  WorkerPool workers_ ABSL_GUARDED_BY(mu_);
  SplitJobs splits_ ABSL_GUARDED_BY(mu_);
  Scheduler scheduler_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> later_ ABSL_GUARDED_BY(mu_);
  std::thread housekeeper_;
  // Last: destroyed first, committing what is left while the rest exists.
  StoreWriter writer_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_JOB_MANAGER_H_
