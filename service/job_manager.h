// JobManager: the coordinator's model of jobs and workers, with no network
// code in it, and the one façade the RPC handlers call. It validates and
// admits submitted jobs, hands queued jobs to workers with free slots,
// follows each assignment as a lease (a worker that goes quiet or drops its
// link has its jobs put back), and accepts exactly one final result per
// job. Its parts each do one thing: JobQueue (the order of waiting jobs),
// WorkerPool (workers and their leases), JobEvents (watchers and waiters),
// LimitPolicy (defaults and ceilings), ManagerMetrics, and StoreWriter,
// through which every change reaches the store. A job spread over
// workers (JobSpec.max_workers) holds a SplitJob, whose work units are
// leased like jobs (job_manager_split.cc).
//
// Changes are made in memory under the manager's lock and committed by
// the writer after the lock is released, many to one commit. A client
// hears of its job, and watchers get a state, only once it is durable; a
// final state is reported to no one before it is stored. The one thing
// that may run ahead of the disk is an assignment, so that a worker's
// search overlaps the commit: a worker's result counts only through the
// job it names, which is stored first, and attempt numbers are kept
// unique across crashes (see Assign).
#ifndef NPUZZLE_SERVICE_JOB_MANAGER_H_
#define NPUZZLE_SERVICE_JOB_MANAGER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "npuzzle/v1/solver.pb.h"
#include "npuzzle/v1/worker.pb.h"
#include "service/job_events.h"
#include "service/job_queue.h"
#include "service/job_store.h"
#include "service/job_watch.h"
#include "service/limit_policy.h"
#include "service/manager_metrics.h"
#include "service/split_job.h"
#include "service/store_writer.h"
#include "service/tenant_quota.h"
#include "service/worker_pool.h"

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
  // Calls `done` with the job once it has finished, or as it stands after
  // `timeout`; at once for finished jobs. NotFound for unknown ids.
  absl::Status WhenFinished(const std::string& id, absl::Duration timeout, std::function<void(const v1::Job&)> done);
  // The job's current state is the watch's first event.
  absl::StatusOr<std::shared_ptr<JobWatch>> Watch(const std::string& id, const std::string& tenant = "");
  absl::StatusOr<JobStore::Page> List(const std::string& tenant, const std::vector<v1::JobState>& states,
                                      const std::map<std::string, std::string>& labels, int page_size, int64_t before);

  void Connected(std::shared_ptr<WorkerLink> link, const v1::WorkerHello& hello);
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
  // both; every lease is on a running job of its worker. Call after Sync.
  absl::Status CheckInvariants();

  // The coordinator's Prometheus metrics. Scraping calls into the manager,
  // so whatever serves them must stop before the manager is destroyed.
  const Metrics& metrics() const { return metrics_.metrics(); }

 private:
  struct Active {
    v1::Job job;  // as last changed: stored, or about to be
    int64_t seq = 0;
    bool cancel_requested = false;
    // Set while the job's final state is being stored; until then it is
    // reported as `job`, and nothing else may happen to it.
    std::optional<v1::Job> final_job;
    double node_rate = 0;  // from the running attempt's latest progress
    // The attempt in the job's last durable write, and the least number
    // its next attempt may have (see Assign).
    int durable_attempt = 0;
    int min_attempt = 0;
    // Running when the coordinator restarted, and not yet reclaimed by its
    // worker: handed to another, it counts as lost.
    bool unclaimed = false;
    // Set while a job spread over workers runs: its units are out, not it.
    std::unique_ptr<SplitJob> split;
  };

  // The answer to a spec whose request id names `known`: that job as it is
  // now, or ALREADY_EXISTS if the spec differs.
  absl::StatusOr<v1::Job> Resubmitted(const v1::JobSpec& submitted, const v1::Job& known) ABSL_LOCKS_EXCLUDED(mu_);

  // Queues `job` for the writer (a new job when `seq` > 0); `done` runs
  // under the lock once the commit is durable or has failed.
  void Store(const v1::Job& job, int64_t seq, StoreWriter::Done done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores the job's current state, and tells its watchers once stored.
  void StoreState(const Active& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands queued writes to the writer; called before the lock is released,
  // so the writer sees changes in the order they were made.
  void HandOff() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Work to do once the lock is released (gRPC completions).
  void Later(std::function<void()> f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { later_.push_back(std::move(f)); }

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
  // The writer's completions for one commit.
  void Committed(std::vector<StoreWriter::Done>& done, const std::vector<absl::Status>& outcomes)
      ABSL_LOCKS_EXCLUDED(mu_);

  void Admitted(const std::string& id, const std::string& tenant, const v1::JobSpec& submitted, const Reply& reply,
                const absl::Status& stored) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Dispatch() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  TenantQuota QuotaOf(const std::string& tenant) const;
  // Gives the job to `w` (`adopted`: `w` already runs it at this attempt).
  void Assign(Active& a, Worker& w, bool adopted) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AssignmentStored(const std::string& id, int attempt, bool adopted, bool sent, const absl::Status& stored)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendAssignment(const Active& a, Worker& w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a lost worker against the job: false, with the job failed, once
  // that has happened too often.
  bool CountLoss(Active& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Back to the queue; `lost` counts against the job.
  void Requeue(Active& a, bool lost) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the job: stored first, then reported, then forgotten.
  void Finish(Active& a, v1::JobState state, const v1::Result* result, const std::string& error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FinalStored(const std::string& id, const absl::Status& stored) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops an admitted job whose insertion failed.
  void Forget(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleFinished(Worker& w, const v1::JobFinished& f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropWorker(WorkerLink* link) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The active job `w` runs at `attempt`, or null.
  Active* Assigned(const Worker& w, const std::string& job_id, int attempt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `w` holds the lease `key` (a job's id or a unit's) at `attempt`.
  bool Holds(const Worker& w, const std::string& key, int attempt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Jobs spread over workers (job_manager_split.cc).
  // Starts the job's first threshold; its units go out as workers free up.
  void StartSplit(Active& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives `w` a unit of a running split job of at least priority `floor`,
  // taking the jobs in turn; false if none has one for it.
  bool LeaseUnit(Worker& w, std::optional<int32_t> floor) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The running split job a unit belongs to, at `attempt`, or null.
  Active* SplitOf(const UnitName& unit, int attempt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Subtrees a unit's worker handed back, as it gave them or with its
  // result; false when they are unusable and the job has failed.
  void UnitHandedBack(const UnitName& unit, const v1::HandedBack& given) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool TakeHandedBack(Active& a, const UnitName& unit, const google::protobuf::RepeatedPtrField<std::string>& prefixes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnitFinished(Worker& w, const UnitName& unit, const v1::JobFinished& f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnitProgress(const Worker& w, const UnitName& unit, int attempt, const v1::Progress& progress)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The unit's worker was lost or let it go: it goes out again.
  void ReturnUnit(const UnitName& unit) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tells the unit's worker to stop it, and ends its lease.
  void StopUnit(const std::string& worker_id, const std::string& key, int attempt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends split jobs that ran past their time limit.
  void EndLateSplits(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ShowSplitProgress(Active& a, absl::Time now, bool force) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

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
  absl::flat_hash_map<std::string, Active> active_ ABSL_GUARDED_BY(mu_);
  JobQueue queue_ ABSL_GUARDED_BY(mu_);
  WorkerPool workers_ ABSL_GUARDED_BY(mu_);
  // The running split jobs, and the last one a unit was leased from.
  std::set<std::string> splitting_ ABSL_GUARDED_BY(mu_);
  std::string split_turn_ ABSL_GUARDED_BY(mu_);
  std::vector<StoreWriter::Write> writes_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> later_ ABSL_GUARDED_BY(mu_);
  std::thread housekeeper_;
  // Last: destroyed first, committing what is left while the rest exists.
  StoreWriter writer_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOB_MANAGER_H_
