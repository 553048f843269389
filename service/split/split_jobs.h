// SplitJobs: the running jobs spread over workers (JobSpec.max_workers),
// as the coordinator runs them. Such a job runs on no one worker: its
// SplitJob (split_job.h) cuts each threshold into work units, which are
// leased to workers like jobs, under the same lock and the same quotas,
// and the units' results decide the job's end: solved, exhausted, or
// stopped by a limit that binds over all its units together. Each unit's
// lease is its job's id and the unit's own id (service/workers/lease.h).
// Not thread-safe: the job manager calls it under its lock.
#ifndef NPUZZLE_SERVICE_SPLIT_SPLIT_JOBS_H_
#define NPUZZLE_SERVICE_SPLIT_SPLIT_JOBS_H_

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "npuzzle/v1/worker.pb.h"
#include "service/jobs/job_events.h"
#include "service/jobs/job_lifecycle.h"
#include "service/jobs/manager_metrics.h"
#include "service/jobs/tenant_quota.h"
#include "service/workers/lease.h"
#include "service/workers/worker_pool.h"

namespace npuzzle {

class SplitJobs {
 public:
  using QuotaOf = std::function<TenantQuota(const std::string& tenant)>;

  SplitJobs(JobLifecycle* lifecycle, WorkerPool* workers, JobEvents* events, ManagerMetrics* metrics, QuotaOf quota_of)
      : lifecycle_(lifecycle), workers_(workers), events_(events), metrics_(metrics), quota_of_(std::move(quota_of)) {}

  // Starts the job (kStart, on no one worker) at its first threshold, or
  // at its checkpoint's; its units go out as workers free up.
  void Start(JobRecord& r);

  // Gives `w` a unit of a running split job of priority at least `floor`
  // (none: any), taking the jobs in turn; false if none has one for it.
  bool Lease(Worker& w, std::optional<int32_t> floor);

  // What a unit's worker reports (messages whose unit_id is set).
  void Finished(Worker& w, const v1::JobFinished& f);
  void Progress(const Worker& w, const v1::JobProgress& p);
  void HandedBack(const v1::HandedBack& given);

  // Whether `w` holds the unit `lease` of the job's attempt `attempt`.
  bool Holds(const Worker& w, const LeaseKey& lease, int attempt);
  // The unit's worker was lost or let it go: it goes out again.
  void Return(const LeaseKey& lease);
  // The job is ending: every unit out is stopped on its worker and its
  // lease ends, and the job's split is forgotten.
  void Stop(JobRecord& r);
  // Ends the split jobs that have run past their time limit.
  void EndLate(absl::Time now);

  // More workers the running split jobs could use now.
  int64_t WorkersWanted() const;
  // The latest rate of the unit `lease` (0 when it is not out).
  double UnitRate(const LeaseKey& lease) const;
  // Adds to `problems` what contradicts the leases: a unit lease with no
  // unit out behind it, a unit out with no lease.
  void CheckLeases(const Worker& w, std::vector<std::string>* problems) const;
  void CheckUnits(std::vector<std::string>* problems) const;

 private:
  // The running split job whose unit `lease` names, at `attempt`, or null.
  JobRecord* SplitOf(const LeaseKey& lease, int attempt);
  const JobRecord* RunningSplit(const std::string& id) const;
  // Subtrees a unit's worker handed back: false when they are unusable
  // and the job has failed.
  bool TakeHandedBack(JobRecord& r, int64_t unit, const google::protobuf::RepeatedPtrField<std::string>& prefixes);
  // Tells the unit's worker to stop it, and ends its lease.
  void StopUnit(const std::string& worker_id, const LeaseKey& lease, int attempt);
  void ShowProgress(JobRecord& r, absl::Time now, bool force);
  void End(JobRecord& r, const std::string& status, absl::Time now);

  JobLifecycle* const lifecycle_;
  WorkerPool* const workers_;
  JobEvents* const events_;
  ManagerMetrics* const metrics_;
  const QuotaOf quota_of_;
  // The running split jobs, and the last one a unit was leased from.
  std::set<std::string> running_;
  std::string turn_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_SPLIT_SPLIT_JOBS_H_
