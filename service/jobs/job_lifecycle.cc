#include "service/jobs/job_lifecycle.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"

namespace npuzzle {

JobRecord* JobLifecycle::Find(const std::string& id) {
  auto it = records_.find(id);
  return it == records_.end() ? nullptr : &it->second;
}

bool JobLifecycle::Apply(JobRecord& r, JobChange change) {
  absl::StatusOr<v1::JobState> next = NextState(r.job.state(), change);
  if (!next.ok()) {
    ++refused_;
    Log(absl::StrCat("job ", r.job.id(), ": refused: ", next.status().message()));
    return false;
  }
  r.job.set_state(*next);
  return true;
}

void JobLifecycle::Write(const v1::Job& job, int64_t seq, Stored stored) {
  writes_.push_back(
      {{job, seq},
       [this, id = job.id(), attempt = job.attempt(), stored = std::move(stored)](const absl::Status& status) {
         if (JobRecord* r = Find(id); r != nullptr && status.ok()) r->durable_attempt = attempt;
         if (stored) stored(status);
       }});
}

void JobLifecycle::WriteAndTell(const v1::Job& job, Stored stored) {
  Write(job, 0, [this, job, stored = std::move(stored)](const absl::Status& status) {
    if (status.ok()) events_->State(job);
    if (stored) stored(status);
  });
}

std::vector<StoreWriter::Write> JobLifecycle::TakeWrites() { return std::exchange(writes_, {}); }

void JobLifecycle::Reload(std::vector<JobStore::Row> rows, absl::Time resume, Stored stored) {
  for (JobStore::Row& row : rows) {
    JobRecord& r = records_[row.job.id()];
    r.job = std::move(row.job);
    r.seq = row.seq;
    r.durable_attempt = r.job.attempt();
    // The last coordinator may have sent the next attempt before storing
    // it (see JobManager::Assign): that number is never used again.
    r.min_attempt = r.job.attempt() + 2;
    absl::Time not_before = absl::InfinitePast();
    if (r.job.state() == v1::JOB_STATE_RUNNING && Apply(r, JobChange::kRequeue)) {
      // Its worker may still be at it: give it time to reconnect.
      r.unclaimed = true;
      not_before = resume;
      Write(r.job, 0, stored);
    }
    queue_.Push(r.job, r.seq, not_before);
  }
}

JobRecord& JobLifecycle::Admit(v1::Job job, int64_t seq, Stored stored) {
  JobRecord& r = records_[job.id()];
  r.job = std::move(job);
  r.seq = seq;
  const bool decided = r.job.has_result();
  Apply(r, decided ? JobChange::kDecide : JobChange::kAdmit);
  if (decided) {
    SetTime(r.job.mutable_finish_time(), absl::Now());
    r.final_job = r.job;
  } else {
    queue_.Push(r.job, r.seq);
  }
  Write(r.job, seq, [this, id = r.job.id(), decided, stored = std::move(stored)](const absl::Status& status) {
    stored(status);
    if (!status.ok()) {
      Forget(id);
      return;
    }
    metrics_->Submitted();
    if (decided) FinalStored(id, status);
  });
  return r;
}

bool JobLifecycle::Start(JobRecord& r, const std::string& worker, int attempt, bool adopted, Stored stored) {
  if (!Apply(r, JobChange::kStart)) return false;
  queue_.Erase(r.job.id());
  if (!adopted) {
    r.job.set_attempt(attempt);
    r.job.set_worker_id(worker);
    r.job.clear_progress();
    r.node_rate = 0;
    SetTime(r.job.mutable_start_time(), absl::Now());
  }
  WriteAndTell(r.job, std::move(stored));
  return true;
}

void JobLifecycle::Requeue(JobRecord& r, Requeued why) {
  if (!Apply(r, JobChange::kRequeue)) return;
  r.job.clear_progress();
  r.node_rate = 0;
  if (why != Requeued::kNotStored) metrics_->Requeued(why == Requeued::kLost);
  // If this write fails, a restart finds the job running and requeues it.
  WriteAndTell(r.job);
  queue_.Push(r.job, r.seq);
}

void JobLifecycle::End(JobRecord& r, JobChange change, const v1::Result* result, const std::string& error) {
  absl::StatusOr<v1::JobState> final_state = NextState(r.job.state(), change);
  if (r.ending() || !final_state.ok()) {
    ++refused_;
    Log(absl::StrCat("job ", r.job.id(),
                     ": refused: ", r.ending() ? "it is ending already" : final_state.status().message()));
    return;
  }
  if (hooks_.ending) hooks_.ending(r);
  v1::Job job = r.job;
  job.set_state(*final_state);
  job.clear_progress();
  if (result != nullptr) *job.mutable_result() = *result;
  if (!error.empty()) job.set_error(error);
  SetTime(job.mutable_finish_time(), absl::Now());
  queue_.Erase(job.id());
  r.final_job = job;
  Write(job, 0, [this, id = job.id()](const absl::Status& stored) { FinalStored(id, stored); });
}

void JobLifecycle::FinalStored(const std::string& id, const absl::Status& stored) {
  JobRecord* r = Find(id);
  if (r == nullptr || !r->ending()) return;
  if (!stored.ok()) {
    // Not stored, so not final: run it again rather than report a result
    // a restart could lose.
    r->final_job.reset();
    if (r->job.state() == v1::JOB_STATE_RUNNING) Apply(*r, JobChange::kRequeue);
    r->job.clear_progress();
    queue_.Push(r->job, r->seq);
    return;
  }
  metrics_->Finished(*r->final_job);
  for (std::function<void()>& call : events_->Final(*r->final_job)) hooks_.later(std::move(call));
  records_.erase(id);
}

void JobLifecycle::Record(const JobRecord& r) { Write(r.job, 0, nullptr); }

void JobLifecycle::Forget(const std::string& id) {
  queue_.Erase(id);
  records_.erase(id);
}

}  // namespace npuzzle
