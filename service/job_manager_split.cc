// The job manager's handling of jobs spread over workers: the job runs on
// no one worker; its units (service/split_job.h) are leased to workers like
// jobs, under the same lock, and their results decide the job's end.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/move_pruning.h"
#include "engine/registry.h"
#include "jobspec/job_spec.h"
#include "jobspec/work_unit.h"
#include "service/job_manager.h"
#include "service/job_messages.h"

namespace npuzzle {
namespace {

constexpr absl::Duration kProgressInterval = absl::Milliseconds(250);

v1::CoordinatorMessage HandBackMessage(const std::string& key, int attempt) {
  v1::CoordinatorMessage m;
  m.mutable_hand_back()->set_job_id(key);
  m.mutable_hand_back()->set_attempt(attempt);
  return m;
}

}  // namespace

void JobManager::StartSplit(Active& a) {
  absl::StatusOr<SolveRequest> request = RequestFromSpec(a.job.spec());
  if (!request.ok()) {
    Finish(a, v1::JOB_STATE_FAILED, nullptr, std::string(request.status().message()));
    return;
  }
  const absl::Time now = absl::Now();
  a.job.set_state(v1::JOB_STATE_RUNNING);
  a.job.set_attempt(std::max(a.job.attempt() + 1, a.min_attempt));
  a.job.clear_worker_id();
  a.job.clear_progress();
  a.node_rate = 0;
  SetTime(a.job.mutable_start_time(), now);
  const bool informed = FindAlgorithm(request->algorithm)->uses_heuristic;
  // Built before the job was admitted or reloaded (WarmSplit), so this
  // only looks it up.
  const MovePruning* pruning = MovePruning::For(request->start.rows(), request->start.cols(),
                                                request->options.pruning_length, [] { return false; });
  a.split = std::make_unique<SplitJob>(SplitJob::Params{.start = request->start,
                                                        .goal = request->goal,
                                                        .pruning = pruning,
                                                        .max_workers = a.job.spec().max_workers(),
                                                        .resume = a.job.checkpoint(),
                                                        .started = now,
                                                        .algorithm = request->algorithm,
                                                        .heuristic = informed ? request->heuristic : "none"});
  splitting_.insert(a.job.id());
  ShowSplitProgress(a, now, /*force=*/false);
  StoreState(a);
}

bool JobManager::LeaseUnit(Worker& w, std::optional<int32_t> floor) {
  if (splitting_.empty()) return false;
  auto it = splitting_.upper_bound(split_turn_);
  for (size_t tried = 0; tried < splitting_.size(); ++tried, ++it) {
    if (it == splitting_.end()) it = splitting_.begin();
    Active& a = active_.at(*it);
    if (floor && a.job.spec().priority() < *floor) continue;
    const int64_t max_running = QuotaOf(a.job.tenant()).max_running;
    if (max_running > 0 && workers_.LeasesOf(a.job.tenant()) >= max_running) continue;
    std::optional<SplitJob::Unit> unit = a.split->Lease(w.id);
    if (!unit) continue;
    split_turn_ = *it;
    const v1::Limits& limits = a.job.spec().limits();
    const uint64_t expanded = a.split->ExpandedSoFar();
    const absl::Duration time_left = absl::Milliseconds(limits.max_time_ms()) - (absl::Now() - a.split->started());
    const bool nodes_spent = limits.max_nodes() > 0 && expanded >= limits.max_nodes();
    const bool time_spent = limits.max_time_ms() > 0 && time_left <= absl::ZeroDuration();
    if (nodes_spent || time_spent) {
      a.split->Return(unit->id);
      v1::Result result = a.split->Result(nodes_spent ? "node_limit" : "time_limit", absl::Now());
      Finish(a, v1::JOB_STATE_DONE, &result, "");
      return true;
    }
    const std::string key = UnitKey(a.job.id(), unit->id);
    workers_.Assign(w, key, a.job.tenant());
    v1::CoordinatorMessage m;
    v1::Assignment* assign = m.mutable_assign();
    assign->set_job_id(key);
    assign->set_attempt(a.job.attempt());
    *assign->mutable_spec() =
        UnitSpec(a.job.spec(), limits.max_nodes() - std::min(expanded, limits.max_nodes()), time_left);
    assign->mutable_unit()->set_bound(unit->bound);
    assign->mutable_unit()->set_prefix(MovesToString(unit->prefix));
    w.link->Send(m);
    return true;
  }
  return false;
}

JobManager::Active* JobManager::SplitOf(const UnitName& unit, int attempt) {
  auto it = active_.find(unit.job_id);
  if (it == active_.end()) return nullptr;
  Active& a = it->second;
  return a.split && !a.final_job && a.job.attempt() == attempt ? &a : nullptr;
}

void JobManager::UnitFinished(Worker& w, const UnitName& unit, const v1::JobFinished& f) {
  const std::string key = UnitKey(unit.job_id, unit.unit);
  Active* a = SplitOf(unit, f.attempt());
  // Another threshold's unit, or one already done: whatever it says is
  // old news, limits included.
  if (a == nullptr || !a->split->Pending(unit.unit)) return;
  const bool held = a->split->Leased(unit.unit, w.id);
  if (held) workers_.Release(w, key);
  const std::string& status = f.result().status();
  if (!f.error().empty()) {
    Finish(*a, v1::JOB_STATE_FAILED, nullptr, absl::StrCat("work unit ", unit.unit, ": ", f.error()));
    return;
  }
  if (status == "cancelled") {
    // Stopped by its worker, not by the job: someone else searches it.
    if (held) a->split->Return(unit.unit);
    return;
  }
  if (status != "solved" && status != "depth_limit") {
    // A limit ended the unit (its time, nodes or memory): it ends the job.
    v1::Result result = a->split->Result(status, absl::Now());
    Finish(*a, v1::JOB_STATE_DONE, &result, "");
    return;
  }
  // What it handed back first: its result covers the rest of its subtree.
  if (!TakeHandedBack(*a, unit, f.handed_back())) return;
  std::string holder;
  const SplitJob::Verdict verdict = a->split->Finished(unit.unit, w.id, f.result(), f.next_bound(), &holder);
  if (!holder.empty()) StopUnit(holder, key, f.attempt());
  const absl::Time now = absl::Now();
  switch (verdict) {
    case SplitJob::Verdict::kIgnored:
      return;
    case SplitJob::Verdict::kWait:
      break;
    case SplitJob::Verdict::kNextBound: {
      // Durable before another unit could be lost: a job run again starts
      // at this threshold.
      *a->job.mutable_checkpoint() = a->split->Checkpoint();
      Store(a->job, 0, [](const absl::Status&) {});
      const int max_depth = a->job.spec().limits().max_depth();
      if (max_depth > 0 && a->split->bound() > max_depth) {
        v1::Result result = a->split->Result("depth_limit", now);
        Finish(*a, v1::JOB_STATE_DONE, &result, "");
        return;
      }
      break;
    }
    case SplitJob::Verdict::kSolved:
    case SplitJob::Verdict::kExhausted: {
      // Solved, Result() is the solution; exhausted, nothing lies beyond
      // the threshold, so nothing is: unsolvable.
      v1::Result result = a->split->Result("unsolvable", now);
      Finish(*a, v1::JOB_STATE_DONE, &result, "");
      return;
    }
  }
  ShowSplitProgress(*a, now, /*force=*/verdict == SplitJob::Verdict::kNextBound);
}

void JobManager::UnitProgress(const Worker& w, const UnitName& unit, int attempt, const v1::Progress& progress) {
  Active* a = SplitOf(unit, attempt);
  if (a == nullptr || !a->split->Leased(unit.unit, w.id)) return;
  a->split->Progress(unit.unit, progress);
  const uint64_t max_nodes = a->job.spec().limits().max_nodes();
  if (max_nodes > 0 && a->split->ExpandedSoFar() >= max_nodes) {
    v1::Result result = a->split->Result("node_limit", absl::Now());
    Finish(*a, v1::JOB_STATE_DONE, &result, "");
    return;
  }
  const absl::Time now = absl::Now();
  if (workers_.Freest() != nullptr && a->split->AskHandBack(unit.unit, now)) {
    w.link->Send(HandBackMessage(UnitKey(unit.job_id, unit.unit), attempt));
  }
  ShowSplitProgress(*a, now, /*force=*/false);
}

void JobManager::UnitHandedBack(const UnitName& unit, const v1::HandedBack& given) {
  Active* a = SplitOf(unit, given.attempt());
  if (a != nullptr && TakeHandedBack(*a, unit, given.prefixes())) ShowSplitProgress(*a, absl::Now(), /*force=*/false);
}

bool JobManager::TakeHandedBack(Active& a, const UnitName& unit,
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
  if (added.ok()) added = a.split->HandedBack(unit.unit, subtrees);
  if (added.ok()) {
    metrics_.UnitsHandedBack(*added);
    return true;
  }
  // Its worker searches none of them, so without them no answer is sure.
  Finish(a, v1::JOB_STATE_FAILED, nullptr,
         absl::StrCat("a work unit's hand back is unusable: ", added.status().message()));
  return false;
}

void JobManager::ShowSplitProgress(Active& a, absl::Time now, bool force) {
  v1::Progress progress = a.split->JobProgress(now - a.split->started());
  a.node_rate = progress.nodes_per_second();
  *a.job.mutable_progress() = progress;
  if (a.split->ProgressDue(now, force ? absl::ZeroDuration() : kProgressInterval)) {
    events_.Progress(a.job.id(), progress);
  }
}

void JobManager::ReturnUnit(const UnitName& unit) {
  auto it = active_.find(unit.job_id);
  if (it != active_.end() && it->second.split && !it->second.final_job) it->second.split->Return(unit.unit);
}

void JobManager::StopUnit(const std::string& worker_id, const std::string& key, int attempt) {
  if (Worker* w = workers_.FindById(worker_id); w != nullptr && workers_.Release(*w, key)) {
    w->link->Send(CancelMessage(key, attempt));
  }
}

void JobManager::EndLateSplits(absl::Time now) {
  for (auto it = splitting_.begin(); it != splitting_.end();) {
    Active& a = active_.at(*it++);
    const uint64_t max_time_ms = a.job.spec().limits().max_time_ms();
    if (max_time_ms == 0 || now - a.split->started() < absl::Milliseconds(max_time_ms)) continue;
    v1::Result result = a.split->Result("time_limit", now);
    Finish(a, v1::JOB_STATE_DONE, &result, "");
  }
}

}  // namespace npuzzle
