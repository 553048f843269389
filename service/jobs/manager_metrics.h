// ManagerMetrics: the coordinator's Prometheus metrics. Counters are
// bumped as things happen; gauges are read at scrape time from the
// sources the job manager provides.
#ifndef NPUZZLE_SERVICE_JOBS_MANAGER_METRICS_H_
#define NPUZZLE_SERVICE_JOBS_MANAGER_METRICS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/metrics.h"
#include "npuzzle/v1/solver.pb.h"
#include "service/store/job_store.h"

namespace npuzzle {

struct ManagerCounts {
  int64_t queued = 0;
  int64_t running = 0;
  int64_t split_workers_wanted = 0;  // workers running split jobs could use now, beyond those they have
  int64_t workers = 0;
  int64_t free_slots = 0;
};

struct WorkerGauges {
  std::string id;
  double free_slots = 0;
  double running = 0;
  double node_rate = 0;  // states per second its running jobs report
};

// A tenant's jobs now; only tenants with some appear, so the series are
// bounded by the tenants in the tokens file.
struct TenantGauges {
  std::string tenant;
  double queued = 0;
  double running = 0;
};

class ManagerMetrics {
 public:
  struct Sources {
    std::function<absl::StatusOr<std::map<v1::JobState, int64_t>>()> jobs_by_state;
    std::function<absl::StatusOr<JobStore::Usage>()> store_usage;
    std::function<ManagerCounts()> counts;
    std::function<std::vector<WorkerGauges>()> workers;
    std::function<std::vector<TenantGauges>()> tenants;
  };
  explicit ManagerMetrics(Sources sources);

  void Submitted() { submitted_->Increment(); }
  void Attempt() { attempts_->Increment(); }
  void Requeued(bool lost) { (lost ? requeued_lost_ : requeued_released_)->Increment(); }
  void UnitsHandedBack(int units) { units_handed_back_->Increment(units); }
  // A job that reached its final state, as stored.
  void Finished(const v1::Job& job);
  // One store commit of `writes` changes.
  void Committed(size_t writes) {
    commits_->Increment();
    writes_->Increment(static_cast<double>(writes));
  }
  // A commit that failed (a full disk, an I/O error, a lock held too long).
  void CommitFailed() { commit_failures_->Increment(); }

  const Metrics& metrics() const { return metrics_; }

 private:
  std::vector<Sample> PerWorker(double WorkerGauges::*value) const;

  const Sources sources_;
  Metrics metrics_;
  prometheus::Counter* submitted_;
  std::map<v1::JobState, prometheus::Counter*> finished_;  // by final state
  prometheus::Counter* attempts_;
  prometheus::Counter* requeued_lost_;
  prometheus::Counter* requeued_released_;
  prometheus::Counter* units_handed_back_;
  prometheus::Counter* nodes_expanded_;
  prometheus::Counter* commits_;
  prometheus::Counter* commit_failures_;
  prometheus::Counter* writes_;
  prometheus::Histogram* latency_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_MANAGER_METRICS_H_
