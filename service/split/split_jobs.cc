#include "service/split/split_jobs.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/move_pruning.h"
#include "engine/registry.h"
#include "jobspec/job_spec.h"
#include "jobspec/work_unit.h"
#include "service/workers/worker_messages.h"

namespace npuzzle {
namespace {

constexpr absl::Duration kProgressInterval = absl::Milliseconds(250);

}  // namespace

void SplitJobs::Start(JobRecord& r) {
  absl::StatusOr<SolveRequest> request = RequestFromSpec(r.job.spec());
  if (!request.ok()) {
    r.job.set_error_permanent(IsSpecError(request.status()));
    lifecycle_->End(r, JobChange::kFail, nullptr, std::string(request.status().message()));
    return;
  }
  const absl::Time now = absl::Now();
  const bool informed = FindAlgorithm(request->algorithm)->uses_heuristic;
  // Built before the job was admitted or reloaded (WarmSplit), so this
  // only looks it up.
  const MovePruning* pruning = MovePruning::For(request->start.rows(), request->start.cols(),
                                                request->options.pruning_length, [] { return false; });
  r.split = std::make_unique<SplitJob>(SplitJob::Params{.start = request->start,
                                                        .goal = request->goal,
                                                        .pruning = pruning,
                                                        .max_workers = r.job.spec().max_workers(),
                                                        .resume = r.job.checkpoint(),
                                                        .started = now,
                                                        .algorithm = request->algorithm,
                                                        .heuristic = informed ? request->heuristic : "none"});
  running_.insert(r.job.id());
  lifecycle_->Start(r, /*worker=*/"", r.NextAttempt(), /*adopted=*/false, nullptr);
  ShowProgress(r, now, /*force=*/false);
}

bool SplitJobs::Lease(Worker& w, std::optional<int32_t> floor) {
  if (running_.empty()) return false;
  auto it = running_.upper_bound(turn_);
  for (size_t tried = 0; tried < running_.size(); ++tried, ++it) {
    if (it == running_.end()) it = running_.begin();
    JobRecord& r = *lifecycle_->Find(*it);
    if (floor && r.job.spec().priority() < *floor) continue;
    const int64_t max_running = quota_of_(r.job.tenant()).max_running;
    if (max_running > 0 && workers_->LeasesOf(r.job.tenant()) >= max_running) continue;
    std::optional<SplitJob::Unit> unit = r.split->Lease(w.id);
    if (!unit) continue;
    turn_ = *it;
    const v1::Limits& limits = r.job.spec().limits();
    const uint64_t expanded = r.split->ExpandedSoFar();
    const absl::Duration time_left = absl::Milliseconds(limits.max_time_ms()) - (absl::Now() - r.split->started());
    const bool nodes_spent = limits.max_nodes() > 0 && expanded >= limits.max_nodes();
    const bool time_spent = limits.max_time_ms() > 0 && time_left <= absl::ZeroDuration();
    if (nodes_spent || time_spent) {
      r.split->Return(unit->id);
      End(r, nodes_spent ? "node_limit" : "time_limit", absl::Now());
      return true;
    }
    const LeaseKey lease{r.job.id(), unit->id};
    workers_->Assign(w, lease, r.job.tenant());
    v1::CoordinatorMessage m;
    v1::Assignment* assign = m.mutable_assign();
    assign->set_job_id(r.job.id());
    assign->set_attempt(r.job.attempt());
    *assign->mutable_spec() =
        UnitSpec(r.job.spec(), limits.max_nodes() - std::min(expanded, limits.max_nodes()), time_left);
    assign->mutable_unit()->set_id(unit->id);
    assign->mutable_unit()->set_bound(unit->bound);
    assign->mutable_unit()->set_prefix(MovesToString(unit->prefix));
    w.link->Send(m);
    return true;
  }
  return false;
}

JobRecord* SplitJobs::SplitOf(const LeaseKey& lease, int attempt) {
  JobRecord* r = lifecycle_->Find(lease.job_id);
  return r != nullptr && r->split && !r->ending() && r->job.attempt() == attempt ? r : nullptr;
}

const JobRecord* SplitJobs::RunningSplit(const std::string& id) const {
  const JobRecord* r = lifecycle_->Find(id);
  return r != nullptr && r->split && !r->ending() ? r : nullptr;
}

bool SplitJobs::Holds(const Worker& w, const LeaseKey& lease, int attempt) {
  JobRecord* r = SplitOf(lease, attempt);
  return r != nullptr && r->split->Leased(lease.unit, w.id);
}

void SplitJobs::End(JobRecord& r, const std::string& status, absl::Time now) {
  // Solved, Result() is the solution; otherwise it carries `status`.
  const v1::Result result = r.split->Result(status, now);
  lifecycle_->End(r, JobChange::kFinish, &result, "");
}

void SplitJobs::Finished(Worker& w, const v1::JobFinished& f) {
  const LeaseKey lease{f.job_id(), f.unit_id()};
  JobRecord* r = SplitOf(lease, f.attempt());
  // Another threshold's unit, or one already done: whatever it says is
  // old news, limits included.
  if (r == nullptr || !r->split->Pending(lease.unit)) return;
  const bool held = r->split->Leased(lease.unit, w.id);
  if (held) workers_->Release(w, lease);
  const std::string& status = f.result().status();
  if (!f.error().empty()) {
    r->job.set_error_permanent(f.error_permanent());
    lifecycle_->End(*r, JobChange::kFail, nullptr, absl::StrCat("work unit ", lease.unit, ": ", f.error()));
    return;
  }
  if (status == "cancelled") {
    // Stopped by its worker, not by the job: someone else searches it.
    if (held) r->split->Return(lease.unit);
    return;
  }
  if (status != "solved" && status != "depth_limit") {
    // A limit ended the unit (its time, nodes or memory): it ends the job.
    End(*r, status, absl::Now());
    return;
  }
  // What it handed back first: its result covers the rest of its subtree.
  if (!TakeHandedBack(*r, lease.unit, f.handed_back())) return;
  std::string holder;
  const SplitJob::Verdict verdict = r->split->Finished(lease.unit, w.id, f.result(), f.next_bound(), &holder);
  if (!holder.empty()) StopUnit(holder, lease, f.attempt());
  const absl::Time now = absl::Now();
  switch (verdict) {
    case SplitJob::Verdict::kIgnored:
      return;
    case SplitJob::Verdict::kWait:
      break;
    case SplitJob::Verdict::kNextBound: {
      // Durable before another unit could be lost: a job run again starts
      // at this threshold.
      *r->job.mutable_checkpoint() = r->split->Checkpoint();
      lifecycle_->Record(*r);
      const int max_depth = r->job.spec().limits().max_depth();
      if (max_depth > 0 && r->split->bound() > max_depth) {
        End(*r, "depth_limit", now);
        return;
      }
      break;
    }
    case SplitJob::Verdict::kSolved:
    case SplitJob::Verdict::kExhausted:
      // Exhausted, nothing lies beyond the threshold, so nothing is:
      // unsolvable.
      End(*r, "unsolvable", now);
      return;
  }
  ShowProgress(*r, now, /*force=*/verdict == SplitJob::Verdict::kNextBound);
}

void SplitJobs::Progress(const Worker& w, const v1::JobProgress& p) {
  const LeaseKey lease{p.job_id(), p.unit_id()};
  JobRecord* r = SplitOf(lease, p.attempt());
  if (r == nullptr || !r->split->Leased(lease.unit, w.id)) return;
  r->split->Progress(lease.unit, p.progress());
  const uint64_t max_nodes = r->job.spec().limits().max_nodes();
  if (max_nodes > 0 && r->split->ExpandedSoFar() >= max_nodes) {
    End(*r, "node_limit", absl::Now());
    return;
  }
  const absl::Time now = absl::Now();
  if (workers_->Freest() != nullptr && r->split->AskHandBack(lease.unit, now)) {
    w.link->Send(HandBackMessage(lease, p.attempt()));
  }
  ShowProgress(*r, now, /*force=*/false);
}

void SplitJobs::HandedBack(const v1::HandedBack& given) {
  JobRecord* r = SplitOf({given.job_id(), given.unit_id()}, given.attempt());
  if (r != nullptr && TakeHandedBack(*r, given.unit_id(), given.prefixes())) ShowProgress(*r, absl::Now(), false);
}

bool SplitJobs::TakeHandedBack(JobRecord& r, int64_t unit,
                               const google::protobuf::RepeatedPtrField<std::string>& prefixes) {
  std::vector<std::vector<Dir>> subtrees;
  absl::StatusOr<int> added = 0;
  for (const std::string& text : prefixes) {
    absl::StatusOr<std::vector<Dir>> prefix = ParseMoves(text);
    if (!prefix.ok()) {
      added = prefix.status();
      break;
    }
    subtrees.push_back(*std::move(prefix));
  }
  if (added.ok()) added = r.split->HandedBack(unit, subtrees);
  if (added.ok()) {
    metrics_->UnitsHandedBack(*added);
    return true;
  }
  // Its worker searches none of them, so without them no answer is sure.
  lifecycle_->End(r, JobChange::kFail, nullptr,
                  absl::StrCat("a work unit's hand back is unusable: ", added.status().message()));
  return false;
}

void SplitJobs::ShowProgress(JobRecord& r, absl::Time now, bool force) {
  v1::Progress progress = r.split->JobProgress(now - r.split->started());
  r.node_rate = progress.nodes_per_second();
  *r.job.mutable_progress() = progress;
  if (r.split->ProgressDue(now, force ? absl::ZeroDuration() : kProgressInterval)) {
    events_->Progress(r.job.id(), progress);
  }
}

void SplitJobs::Return(const LeaseKey& lease) {
  JobRecord* r = lifecycle_->Find(lease.job_id);
  if (r != nullptr && r->split && !r->ending()) r->split->Return(lease.unit);
}

void SplitJobs::StopUnit(const std::string& worker_id, const LeaseKey& lease, int attempt) {
  if (Worker* w = workers_->FindById(worker_id); w != nullptr && workers_->Release(*w, lease)) {
    w->link->Send(CancelMessage(lease, attempt));
  }
}

void SplitJobs::Stop(JobRecord& r) {
  if (!r.split) return;
  for (const auto& [unit, worker] : r.split->Out()) StopUnit(worker, {r.job.id(), unit}, r.job.attempt());
  running_.erase(r.job.id());
  r.split.reset();
}

void SplitJobs::EndLate(absl::Time now) {
  for (auto it = running_.begin(); it != running_.end();) {
    JobRecord& r = *lifecycle_->Find(*it++);
    const uint64_t max_time_ms = r.job.spec().limits().max_time_ms();
    if (max_time_ms == 0 || now - r.split->started() < absl::Milliseconds(max_time_ms)) continue;
    End(r, "time_limit", now);
  }
}

int64_t SplitJobs::WorkersWanted() const {
  int64_t wanted = 0;
  for (const std::string& id : running_) {
    if (const JobRecord* r = RunningSplit(id)) wanted += static_cast<int64_t>(r->split->WorkersWanted());
  }
  return wanted;
}

double SplitJobs::UnitRate(const LeaseKey& lease) const {
  const JobRecord* r = RunningSplit(lease.job_id);
  return r == nullptr ? 0 : r->split->UnitRate(lease.unit);
}

void SplitJobs::CheckLeases(const Worker& w, std::vector<std::string>* problems) const {
  for (const LeaseKey& lease : w.running) {
    if (!lease.is_unit()) continue;
    const JobRecord* r = RunningSplit(lease.job_id);
    if (r == nullptr || !r->split->Leased(lease.unit, w.id)) {
      problems->push_back(absl::StrCat(w.id, " holds a lease on ", lease.ToString(), ", which is no unit out"));
    }
  }
}

void SplitJobs::CheckUnits(std::vector<std::string>* problems) const {
  for (const std::string& id : running_) {
    const JobRecord* r = RunningSplit(id);
    if (r == nullptr) {
      problems->push_back(id + " is among the split jobs but does not run split");
      continue;
    }
    for (const auto& [unit, worker] : r->split->Out()) {
      const Worker* w = workers_->FindById(worker);
      if (w == nullptr || !w->running.contains(LeaseKey{id, unit})) {
        problems->push_back(absl::StrCat(id, "'s unit ", unit, " is out without a lease"));
      }
    }
  }
}

}  // namespace npuzzle
