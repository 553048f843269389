#include "service/jobs/manager_metrics.h"

#include <utility>

#include "absl/time/time.h"
#include "google/protobuf/util/time_util.h"
#include "jobspec/job_state.h"

namespace npuzzle {
namespace {

absl::Time TimeOf(const google::protobuf::Timestamp& t) {
  return absl::FromUnixNanos(google::protobuf::util::TimeUtil::TimestampToNanoseconds(t));
}

}  // namespace

ManagerMetrics::ManagerMetrics(Sources sources) : sources_(std::move(sources)) {
  Metrics& m = metrics_;
  const std::string finished = "npuzzle_jobs_finished_total";
  const std::string finished_help = "jobs that reached a final state, by that state";
  const std::string requeues = "npuzzle_job_requeues_total";
  const std::string requeues_help = "running jobs put back in the queue, by reason";
  submitted_ = m.AddCounter("npuzzle_jobs_submitted_total", "jobs accepted (idempotent repeats not counted)");
  for (const JobTransition& t : JobTransitions()) {
    if (IsFinal(t.to) && !finished_.contains(t.to)) {
      finished_[t.to] = m.AddCounter(finished, finished_help, {{"state", std::string(JobStateName(t.to))}});
    }
  }
  attempts_ = m.AddCounter("npuzzle_job_attempts_total", "jobs handed to a worker (each attempt counts)");
  requeued_lost_ = m.AddCounter(requeues, requeues_help, {{"reason", "worker_lost"}});
  requeued_released_ = m.AddCounter(requeues, requeues_help, {{"reason", "released"}});
  units_handed_back_ = m.AddCounter("npuzzle_split_units_handed_back_total",
                                    "work units made of subtrees that running units handed back for idle workers");
  nodes_expanded_ = m.AddCounter("npuzzle_nodes_expanded_total", "states expanded by finished jobs");
  commits_ = m.AddCounter("npuzzle_store_commits_total", "job store commits, each one transaction and one sync");
  commit_failures_ = m.AddCounter("npuzzle_store_commit_failures_total",
                                  "job store commits that failed: every change in them was not stored");
  writes_ = m.AddCounter("npuzzle_store_writes_total", "job changes stored (many share a commit under load)");
  latency_ = m.AddHistogram("npuzzle_job_latency_seconds", "submit to final result, for jobs that end done",
                            ExponentialBuckets(0.001, 2, 24));

  m.AddCollectedGauge("npuzzle_jobs", "jobs in the store, by state", [this] {
    std::vector<Sample> samples;
    absl::StatusOr<std::map<v1::JobState, int64_t>> counts = sources_.jobs_by_state();
    if (!counts.ok()) return samples;
    for (int s = v1::JOB_STATE_QUEUED; s <= v1::JOB_STATE_CANCELLED; ++s) {
      const auto state = static_cast<v1::JobState>(s);
      const auto it = counts->find(state);
      samples.push_back(
          {{{"state", std::string(JobStateName(state))}}, it == counts->end() ? 0.0 : static_cast<double>(it->second)});
    }
    return samples;
  });
  m.AddCollectedGauge("npuzzle_store_bytes", "the job store's size on disk, and how much of it is free for reuse",
                      [this] {
                        std::vector<Sample> samples;
                        absl::StatusOr<JobStore::Usage> usage = sources_.store_usage();
                        if (!usage.ok()) return samples;
                        samples.push_back({{{"space", "total"}}, static_cast<double>(usage->bytes)});
                        samples.push_back({{{"space", "free"}}, static_cast<double>(usage->free_bytes)});
                        return samples;
                      });
  m.AddCollectedGauge("npuzzle_queue_depth", "jobs waiting for a worker", [this] {
    return std::vector<Sample>{{{}, static_cast<double>(sources_.counts().queued)}};
  });
  m.AddCollectedGauge("npuzzle_split_workers_wanted",
                      "more workers the running split jobs could use now: units waiting, up to each job's max_workers",
                      [this] {
                        return std::vector<Sample>{{{}, static_cast<double>(sources_.counts().split_workers_wanted)}};
                      });
  m.AddCollectedGauge("npuzzle_workers_connected", "worker processes connected", [this] {
    return std::vector<Sample>{{{}, static_cast<double>(sources_.counts().workers)}};
  });
  m.AddCollectedGauge("npuzzle_tenant_jobs",
                      "each tenant's queued jobs, and its running leases: a split job counts once per unit out, as the "
                      "max_running quota does",
                      [this] {
                        std::vector<Sample> samples;
                        for (const TenantGauges& t : sources_.tenants()) {
                          samples.push_back({{{"tenant", t.tenant}, {"state", "queued"}}, t.queued});
                          samples.push_back({{{"tenant", t.tenant}, {"state", "running"}}, t.running});
                        }
                        return samples;
                      });
  m.AddCollectedGauge("npuzzle_coordinator_worker_free_slots", "jobs each worker could start now",
                      [this] { return PerWorker(&WorkerGauges::free_slots); });
  m.AddCollectedGauge("npuzzle_coordinator_worker_running_jobs",
                      "leases each worker holds: whole jobs, and units of split jobs",
                      [this] { return PerWorker(&WorkerGauges::running); });
  m.AddCollectedGauge("npuzzle_coordinator_worker_node_rate",
                      "states per second each worker's running jobs and units report",
                      [this] { return PerWorker(&WorkerGauges::node_rate); });
}

std::vector<Sample> ManagerMetrics::PerWorker(double WorkerGauges::*value) const {
  std::vector<Sample> samples;
  for (const WorkerGauges& w : sources_.workers()) samples.push_back({{{"worker", w.id}}, w.*value});
  return samples;
}

void ManagerMetrics::Finished(const v1::Job& job) {
  if (auto it = finished_.find(job.state()); it != finished_.end()) it->second->Increment();
  if (job.state() == v1::JOB_STATE_DONE) {
    latency_->Observe(absl::ToDoubleSeconds(TimeOf(job.finish_time()) - TimeOf(job.create_time())));
  }
  nodes_expanded_->Increment(static_cast<double>(job.result().stats().expanded()));
}

}  // namespace npuzzle
