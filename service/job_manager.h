// JobManager: the coordinator's model of jobs and workers, with no network
// code in it. It validates and stores submitted jobs, queues them by
// priority then age, hands them to workers with free slots, follows each
// assignment as a lease (a worker that goes quiet or drops its link has its
// jobs put back), accepts exactly one final result per job, and fans events
// out to watchers. The gRPC handlers are thin layers over it.
#ifndef NPUZZLE_SERVICE_JOB_MANAGER_H_
#define NPUZZLE_SERVICE_JOB_MANAGER_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/metrics.h"
#include "npuzzle/v1/solver.pb.h"
#include "npuzzle/v1/worker.pb.h"
#include "service/job_store.h"
#include "service/job_watch.h"

namespace npuzzle {

struct ManagerOptions {
  size_t max_queued = 10000;
  int max_lost_attempts = 3;  // a job fails once its worker vanished this often
  absl::Duration lease_timeout = absl::Seconds(10);
  // After a restart, jobs that were running wait this long before being
  // handed out again, so their workers can reconnect and keep them.
  absl::Duration recovery_grace = absl::Seconds(3);
  // Applied to every job: defaults where the spec leaves a limit at 0, and
  // ceilings (0: none) no spec may exceed.
  v1::Limits default_limits;
  v1::Limits ceiling_limits;
  int max_threads = 64;
};

// One connected worker, as the transport presents it to the manager. The
// manager calls Send under its lock and Close only after releasing it.
class WorkerLink {
 public:
  virtual ~WorkerLink() = default;
  virtual void Send(const v1::CoordinatorMessage& message) = 0;  // never blocks
  virtual void Close(const std::string& why) = 0;
};

struct ManagerCounts {
  int64_t queued = 0;
  int64_t running = 0;
  int64_t workers = 0;
  int64_t free_slots = 0;
};

class JobManager {
 public:
  JobManager(JobStore* store, ManagerOptions options);
  ~JobManager();

  // Reloads unfinished jobs from the store (running ones go back to the
  // queue) and starts the housekeeping thread.
  absl::Status Start();

  absl::StatusOr<v1::Job> Submit(const v1::JobSpec& spec);
  absl::StatusOr<v1::Job> Get(const std::string& id);
  // A queued job ends at once; a running one is asked to stop and is
  // returned still running (WhenFinished tells when it has stopped).
  absl::StatusOr<v1::Job> Cancel(const std::string& id);
  // Calls `done` with the job once it has finished, or as it stands after
  // `timeout`; at once for finished jobs. NotFound for unknown ids.
  absl::Status WhenFinished(const std::string& id, absl::Duration timeout,
                            std::function<void(const v1::Job&)> done);
  // The job's current state is the watch's first event.
  absl::StatusOr<std::shared_ptr<JobWatch>> Watch(const std::string& id);
  absl::StatusOr<JobStore::Page> List(const std::vector<v1::JobState>& states,
                                      const std::map<std::string, std::string>& labels, int page_size,
                                      int64_t before);

  void Connected(std::shared_ptr<WorkerLink> link, const v1::WorkerHello& hello);
  void Received(WorkerLink* link, const v1::WorkerMessage& message);
  void Disconnected(WorkerLink* link);

  // Refuses new jobs (UNAVAILABLE), waits up to `grace` for running jobs
  // to finish, then drops every worker link. Jobs still running stay
  // recorded as running: after a restart their workers have the recovery
  // grace to reconnect and keep them, else they run again.
  void Drain(absl::Duration grace);

  ManagerCounts Counts();

  // The coordinator's Prometheus metrics. Scraping calls into the manager,
  // so whatever serves them must stop before the manager is destroyed.
  const MetricsRegistry& metrics() const { return metrics_; }

 private:
  // The answer to a spec whose request id names `known`: that job as it is
  // now, or ALREADY_EXISTS if the spec differs.
  absl::StatusOr<v1::Job> Resubmitted(const v1::JobSpec& submitted, const v1::Job& known) ABSL_LOCKS_EXCLUDED(mu_);

  struct Instruments {
    Counter* submitted;
    Counter* done;
    Counter* failed;
    Counter* cancelled;
    Counter* attempts;
    Counter* requeued_lost;
    Counter* requeued_released;
    Counter* nodes_expanded;
    Histogram* latency;
  };
  struct Waiter {
    absl::Time deadline;
    std::function<void(const v1::Job&)> done;
  };
  struct Active {
    v1::Job job;
    int64_t seq = 0;
    bool cancel_requested = false;
    absl::Time not_before;  // not handed out before this (after a restart)
    std::vector<std::shared_ptr<JobWatch>> watchers;
    std::vector<Waiter> waiters;
    double node_rate = 0;  // from the running attempt's latest progress
  };
  struct Worker {
    std::shared_ptr<WorkerLink> link;
    std::string id;
    int capacity = 1;
    std::set<std::string> running;
    bool draining = false;
    absl::Time last_seen;
  };
  using QueueKey = std::tuple<int, int64_t, std::string>;  // -priority, seq, id

  // Work to do once the lock is released (gRPC completions).
  void Later(std::function<void()> f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { later_.push_back(std::move(f)); }
  void Unlock() ABSL_UNLOCK_FUNCTION(mu_);

  void Dispatch() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Enqueue(Active& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Publish(Active& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the job: stored first, then reported, then forgotten.
  void Finish(Active& a, v1::JobState state, const v1::Result* result, const std::string& error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Back to the queue; `lost` counts against the job.
  void Requeue(Active& a, bool lost) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleFinished(Worker& w, const v1::JobFinished& f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropWorker(WorkerLink* link) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The active job `worker` runs at `attempt`, or null.
  Active* Assigned(const Worker& w, const std::string& job_id, int attempt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Housekeeping();
  void RegisterMetrics();
  // Samples for the scraped gauges (jobs by state, queue, workers).
  std::vector<Sample> JobsByState();
  std::vector<Sample> PerWorker(const std::function<double(const Worker&)>& value);

  JobStore* const store_;
  const ManagerOptions options_;
  MetricsRegistry metrics_;
  Instruments instruments_;

  absl::Mutex mu_;
  bool accepting_ ABSL_GUARDED_BY(mu_) = true;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<std::string, Active> active_ ABSL_GUARDED_BY(mu_);
  std::set<QueueKey> queue_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<WorkerLink*, Worker> workers_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> later_ ABSL_GUARDED_BY(mu_);
  std::thread housekeeper_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOB_MANAGER_H_
