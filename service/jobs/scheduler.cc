#include "service/jobs/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "service/workers/worker_messages.h"

namespace npuzzle {
namespace {

v1::Result Cancelled() {
  v1::Result result;
  result.set_status("cancelled");
  return result;
}

}  // namespace

void Scheduler::Dispatch(absl::Time now) {
  if (now < paused_until_) return;
  JobQueue& queue = lifecycle_->queue();
  while (Worker* w = workers_->Freest()) {
    // Units of running split jobs before queued jobs of no higher
    // priority: those jobs were admitted first, or matter more.
    if (splits_->Lease(*w, queue.TopPriority())) continue;
    std::optional<std::string> id = queue.PopReady(now, [this](const std::string& tenant) {
      const int64_t max_running = options_.quota_of ? options_.quota_of(tenant).max_running : 0;
      return max_running == 0 || workers_->LeasesOf(tenant) < max_running;
    });
    if (!id) {
      // Nothing queued may run now: a split job's unit of any priority may.
      if (splits_->Lease(*w, std::nullopt)) continue;
      return;
    }
    JobRecord* r = lifecycle_->Find(*id);
    if (r == nullptr) continue;
    if (SplitsOverWorkers(r->job.spec())) {
      // It was running on no one worker, so none was lost with it.
      r->unclaimed = false;
      splits_->Start(*r);
      continue;
    }
    // Running before a restart, and its worker did not come back for it in
    // the recovery grace: that worker was lost.
    if (std::exchange(r->unclaimed, false) && !CountLoss(*r)) continue;
    Assign(*r, *w, /*adopted=*/false);
  }
}

// An assignment goes to its worker at once when its attempt number is one
// past the job's last durable one, so that the search overlaps the commit;
// otherwise once it is stored. Were the coordinator to crash before the
// commit, its successor starts each job at two past the stored number
// (JobRecord::min_attempt), so no attempt number is ever given twice: at
// most one attempt is ever ahead of the disk, and that one is skipped.
void Scheduler::Assign(JobRecord& r, Worker& w, bool adopted) {
  const int attempt = adopted ? r.job.attempt() : r.NextAttempt();
  const bool early = !adopted && attempt == r.durable_attempt + 1;
  const bool started = lifecycle_->Start(r, w.id, attempt, adopted,
                                         [this, id = r.job.id(), attempt, adopted, early](const absl::Status& s) {
                                           AssignmentStored(id, attempt, adopted, early, s);
                                         });
  if (!started) return;
  workers_->Assign(w, {r.job.id()}, r.job.tenant());
  if (early) SendAssignment(r, w);
}

void Scheduler::SendAssignment(const JobRecord& r, Worker& w) {
  metrics_->Attempt();
  v1::CoordinatorMessage m;
  v1::Assignment* assign = m.mutable_assign();
  assign->set_job_id(r.job.id());
  assign->set_attempt(r.job.attempt());
  *assign->mutable_spec() = r.job.spec();
  if (r.job.has_checkpoint()) *assign->mutable_checkpoint() = r.job.checkpoint();
  w.link->Send(m);
}

void Scheduler::AssignmentStored(const std::string& id, int attempt, bool adopted, bool sent,
                                 const absl::Status& stored) {
  JobRecord* r = lifecycle_->Find(id);
  if (r == nullptr) return;
  Worker* w = workers_->FindById(r->job.worker_id());
  // Its worker may have gone, or the job moved on, while this was stored;
  // the changes that followed speak for it then.
  if (w == nullptr || Assigned(*w, id, attempt) == nullptr) return;
  if (!stored.ok()) {
    // A job does not stay out without the store knowing: take it back.
    workers_->Release(*w, {id});
    if (sent) {
      w->link->Send(CancelMessage({id}, attempt));
    } else {
      // No one heard of this attempt, and the store never held it: its
      // number is free for the next.
      r->job.set_attempt(attempt - 1);
    }
    lifecycle_->Requeue(*r, JobLifecycle::Requeued::kNotStored);
    StorePaused(stored);
    return;
  }
  StoreWritable();
  if (r->cancel_requested && !adopted && !sent) {
    // Cancelled before its worker heard of it.
    workers_->Release(*w, {id});
    const v1::Result cancelled = Cancelled();
    lifecycle_->End(*r, JobChange::kCancel, &cancelled, "");
    return;
  }
  if (!adopted && !sent) SendAssignment(*r, *w);
}

void Scheduler::Reconnected(Worker& w, const v1::WorkerHello& hello) {
  for (const v1::JobFinished& f : hello.finished()) Finished(w, f);
  for (const v1::RunningJob& running : hello.running()) {
    JobRecord* r = running.unit_id() == 0 ? lifecycle_->Find(running.job_id()) : nullptr;
    const bool adopt = r != nullptr && !r->ending() && r->job.state() == v1::JOB_STATE_QUEUED &&
                       r->job.attempt() == running.attempt() && r->job.worker_id() == w.id && !r->cancel_requested;
    if (adopt) {
      // Still running where it was: keep it there rather than start over.
      r->unclaimed = false;
      Assign(*r, w, /*adopted=*/true);
    } else {
      // Units are never kept: their job's run ended with the coordinator.
      w.link->Send(CancelMessage({running.job_id(), running.unit_id()}, running.attempt()));
    }
  }
}

void Scheduler::Finished(Worker& w, const v1::JobFinished& f) {
  if (f.unit_id() != 0) return splits_->Finished(w, f);
  JobRecord* r = lifecycle_->Find(f.job_id());
  if (r == nullptr || r->ending()) return;  // already final: a repeat
  // Only the attempt the job is on counts, and only from its own worker;
  // that is what keeps one final result per job. A job waiting for its
  // worker after a coordinator restart takes its result too.
  const bool current = r->job.attempt() == f.attempt() && r->job.worker_id() == w.id &&
                       (r->job.state() == v1::JOB_STATE_QUEUED || w.running.contains({r->job.id()}));
  if (!current) return;
  workers_->Release(w, {r->job.id()});
  if (!f.error().empty()) {
    r->job.set_error_permanent(f.error_permanent());
    lifecycle_->End(*r, JobChange::kFail, nullptr, f.error());
  } else if (f.result().status() == "cancelled") {
    if (r->cancel_requested) {
      lifecycle_->End(*r, JobChange::kCancel, &f.result(), "");
    } else {
      Requeue(*r, /*lost=*/false);  // stopped by its worker, not by a client
    }
  } else {
    lifecycle_->End(*r, JobChange::kFinish, &f.result(), "");
  }
}

void Scheduler::Released(Worker& w, const v1::JobReleased& released) {
  const LeaseKey lease{released.job_id(), released.unit_id()};
  if (lease.is_unit()) {
    if (Holds(w, lease, released.attempt())) {
      workers_->Release(w, lease);
      splits_->Return(lease);
    }
  } else if (JobRecord* r = Assigned(w, lease.job_id, released.attempt())) {
    workers_->Release(w, lease);
    Requeue(*r, /*lost=*/false);
  }
}

void Scheduler::Lost(WorkerLink* link) {
  for (const LeaseKey& lease : workers_->Remove(link)) {
    if (lease.is_unit()) {
      splits_->Return(lease);
    } else if (JobRecord* r = lifecycle_->Find(lease.job_id)) {
      Requeue(*r, /*lost=*/true);
    }
  }
}

void Scheduler::Cancel(JobRecord& r) {
  if (r.ending()) return;
  if (r.job.state() == v1::JOB_STATE_QUEUED) {
    const v1::Result cancelled = Cancelled();
    lifecycle_->End(r, JobChange::kCancel, &cancelled, "");
  } else if (r.split) {
    const v1::Result result = r.split->Result("cancelled", absl::Now());
    lifecycle_->End(r, JobChange::kCancel, &result, "");
  } else {
    r.cancel_requested = true;
    if (Worker* w = workers_->FindById(r.job.worker_id()); w != nullptr && w->running.contains({r.job.id()})) {
      w->link->Send(CancelMessage({r.job.id()}, r.job.attempt()));
    }
  }
}

JobRecord* Scheduler::Assigned(const Worker& w, const std::string& job_id, int attempt) {
  JobRecord* r = lifecycle_->Find(job_id);
  const bool ours = r != nullptr && !r->ending() && r->job.state() == v1::JOB_STATE_RUNNING &&
                    r->job.worker_id() == w.id && r->job.attempt() == attempt && w.running.contains({job_id});
  return ours ? r : nullptr;
}

bool Scheduler::Holds(const Worker& w, const LeaseKey& lease, int attempt) {
  return lease.is_unit() ? splits_->Holds(w, lease, attempt) : Assigned(w, lease.job_id, attempt) != nullptr;
}

void Scheduler::Requeue(JobRecord& r, bool lost) {
  if (r.ending() || r.job.state() != v1::JOB_STATE_RUNNING) return;
  if (r.cancel_requested) {
    const v1::Result cancelled = Cancelled();
    lifecycle_->End(r, JobChange::kCancel, &cancelled, "");
    return;
  }
  if (lost && !CountLoss(r)) return;
  lifecycle_->Requeue(r, lost ? JobLifecycle::Requeued::kLost : JobLifecycle::Requeued::kReleased);
}

bool Scheduler::CountLoss(JobRecord& r) {
  r.job.set_lost_attempts(r.job.lost_attempts() + 1);
  if (r.job.lost_attempts() < options_.max_lost_attempts) return true;
  lifecycle_->End(r, JobChange::kFail, nullptr,
                  absl::StrFormat("the workers running this job were lost %d times (last: %s)", r.job.lost_attempts(),
                                  r.job.worker_id()));
  return false;
}

void Scheduler::StorePaused(const absl::Status& why) {
  if (store_pause_ == absl::ZeroDuration()) {
    Log(absl::StrCat("the job store cannot record assignments (", why.message(), "): jobs wait until it can"));
  }
  store_pause_ = std::clamp(2 * store_pause_, absl::Seconds(1), absl::Seconds(30));
  paused_until_ = absl::Now() + store_pause_;
}

void Scheduler::StoreWritable() {
  if (store_pause_ == absl::ZeroDuration()) return;
  Log("the job store records assignments again");
  store_pause_ = absl::ZeroDuration();
  paused_until_ = absl::InfinitePast();
}

}  // namespace npuzzle
