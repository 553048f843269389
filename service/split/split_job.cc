#include "service/split/split_job.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/work_split.h"
#include "jobspec/job_spec.h"

namespace npuzzle {
namespace {

// The frontier stops this deep even if it has fewer roots than asked (a
// board with few moves, such as 2x2).
constexpr int kMaxFrontierDepth = 40;
// A unit is cut into its children only when it took more than its share
// of a threshold and at least this many nodes: smaller ones cost less
// than their messages.
constexpr uint64_t kMinNodesToCut = 100000;
constexpr absl::Duration kHandBackInterval = absl::Milliseconds(500);

}  // namespace

bool SplitsOverWorkers(const v1::JobSpec& spec) { return spec.max_workers() > 1; }

void WarmSplit(const v1::JobSpec& spec) {
  if (!SplitsOverWorkers(spec)) return;
  absl::StatusOr<SolveRequest> request = RequestFromSpec(spec);
  if (!request.ok()) return;
  MovePruning::For(request->start.rows(), request->start.cols(), request->options.pruning_length, [] { return false; });
}

SplitJob::SplitJob(Params params) : p_(std::move(params)), max_out_(static_cast<size_t>(std::max(1, p_.max_workers))) {
  SplitFrontier frontier =
      GrowSplitFrontier(p_.start, p_.goal, p_.pruning, kUnitsPerWorker * max_out_, kMaxFrontierDepth);
  bound_ = std::max(frontier.depth, p_.resume.bound());
  for (std::vector<Dir>& root : frontier.roots) Queue(std::move(root));
}

bool SplitJob::UnitMoveAllowed(UnitState from, UnitState to) {
  static constexpr std::pair<UnitState, UnitState> kMoves[] = {{UnitState::kWaiting, UnitState::kOut},
                                                               {UnitState::kOut, UnitState::kWaiting},
                                                               {UnitState::kOut, UnitState::kDone},
                                                               {UnitState::kWaiting, UnitState::kDone}};
  return std::find(std::begin(kMoves), std::end(kMoves), std::pair{from, to}) != std::end(kMoves);
}

bool SplitJob::Move(Entry& e, State to) {
  if (!UnitMoveAllowed(e.state, to)) return false;
  e.state = to;
  return true;
}

void SplitJob::Queue(std::vector<Dir> prefix, int64_t origin) {
  const int64_t id = next_id_++;
  units_[id] = Entry{.prefix = std::move(prefix), .origin = origin == 0 ? id : origin};
  if (origin == 0) {
    waiting_.push_back(id);
  } else {
    waiting_.push_front(id);
  }
}

std::optional<SplitJob::Unit> SplitJob::Lease(const std::string& worker) {
  if (out_ >= max_out_ || waiting_.empty()) return std::nullopt;
  const int64_t id = waiting_.front();
  waiting_.pop_front();
  Entry& e = units_[id];
  Move(e, State::kOut);
  e.worker = worker;
  ++out_;
  return Unit{id, bound_, e.prefix};
}

bool SplitJob::Leased(int64_t unit, const std::string& worker) const {
  auto it = units_.find(unit);
  return it != units_.end() && it->second.state == State::kOut && it->second.worker == worker;
}

bool SplitJob::Pending(int64_t unit) const {
  auto it = units_.find(unit);
  return it != units_.end() && it->second.state != State::kDone;
}

std::vector<std::pair<int64_t, std::string>> SplitJob::Out() const {
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& [id, e] : units_) {
    if (e.state == State::kOut) out.emplace_back(id, e.worker);
  }
  return out;
}

void SplitJob::Return(int64_t unit) {
  auto it = units_.find(unit);
  if (it == units_.end() || !Move(it->second, State::kWaiting)) return;
  Entry& e = it->second;
  e.worker.clear();
  e.progress.Clear();
  --out_;
  waiting_.push_front(unit);
}

bool SplitJob::AskHandBack(int64_t unit, absl::Time now) {
  auto it = units_.find(unit);
  if (it == units_.end() || it->second.state != State::kOut || !waiting_.empty() || out_ >= max_out_ ||
      units_.size() >= kMaxUnits) {
    return false;
  }
  Entry& e = it->second;
  if (e.progress.expanded() < kMinNodesToCut || now - e.asked < kHandBackInterval) return false;
  e.asked = now;
  return true;
}

absl::StatusOr<int> SplitJob::HandedBack(int64_t unit, const std::vector<std::vector<Dir>>& prefixes) {
  // Another threshold's unit, or one done: a result for its whole subtree
  // came first, from a worker that searched it again.
  if (!Pending(unit)) return 0;
  Entry& e = units_.at(unit);
  for (const std::vector<Dir>& prefix : prefixes) {
    if (prefix.size() <= e.prefix.size() || !std::equal(e.prefix.begin(), e.prefix.end(), prefix.begin())) {
      return absl::InvalidArgumentError(absl::StrCat("work unit ", unit, " (", MovesToString(e.prefix),
                                                     ") handed back ", MovesToString(prefix), ", not below it"));
    }
  }
  // First in, in the order given (the order its pass would search them).
  int added = 0;
  for (auto prefix = prefixes.rbegin(); prefix != prefixes.rend(); ++prefix) {
    if (!e.handed_back.insert(*prefix).second) continue;
    Queue(*prefix, e.origin);  // std::map: `e` stays valid
    ++added;
  }
  return added;
}

void SplitJob::Progress(int64_t unit, const v1::Progress& progress) {
  auto it = units_.find(unit);
  if (it != units_.end() && it->second.state == State::kOut) it->second.progress = progress;
}

double SplitJob::UnitRate(int64_t unit) const {
  auto it = units_.find(unit);
  return it != units_.end() && it->second.state == State::kOut ? RateOf(it->second) : 0;
}

double SplitJob::RateOf(const Entry& e) const {
  if (e.progress.nodes_per_second() > 0) return e.progress.nodes_per_second();
  auto last = last_rate_.find(e.worker);
  return last == last_rate_.end() ? 0 : last->second;
}

v1::Progress SplitJob::JobProgress(absl::Duration elapsed) const {
  v1::Progress p;
  uint64_t expanded = expanded_;
  uint64_t generated = generated_;
  double rate = 0;
  std::set<std::string> workers = workers_;
  for (const auto& [id, e] : units_) {
    if (e.state != State::kOut) continue;
    expanded += e.progress.expanded();
    generated += e.progress.generated();
    rate += RateOf(e);
    workers.insert(e.worker);
  }
  p.set_expanded(expanded);
  p.set_generated(generated);
  p.set_nodes_per_second(rate);
  p.set_bound(bound_);
  p.set_elapsed_ms(absl::ToDoubleMilliseconds(elapsed));
  p.set_units_done(static_cast<int32_t>(done_));
  p.set_units_total(static_cast<int32_t>(units_.size()));
  p.set_workers(static_cast<int32_t>(workers.size()));
  // Of this threshold, by its units (the last ones are the smallest: they
  // were cut for that), at the pace of those done so far.
  if (!units_.empty()) {
    p.set_fraction_done(std::min(0.99, static_cast<double>(done_) / static_cast<double>(units_.size())));
    if (done_ > 0) {
      const absl::Duration spent = absl::Now() - threshold_began_;
      p.set_eta_ms(
          absl::ToInt64Milliseconds(spent * static_cast<double>(units_.size() - done_) / static_cast<double>(done_)));
    }
  }
  return p;
}

uint64_t SplitJob::ExpandedSoFar() const {
  uint64_t expanded = expanded_;
  for (const auto& [id, e] : units_) {
    if (e.state == State::kOut) expanded += e.progress.expanded();
  }
  return expanded;
}

void SplitJob::Count(const v1::Stats& stats, const std::string& worker) {
  expanded_ += stats.expanded();
  generated_ += stats.generated();
  max_open_ = std::max(max_open_, stats.max_open());
  ++work_units_;
  workers_.insert(worker);
  if (stats.nodes_per_second() > 0) last_rate_[worker] = stats.nodes_per_second();
}

SplitJob::Verdict SplitJob::Finished(int64_t unit, const std::string& worker, const v1::Result& result, int next_bound,
                                     std::string* holder) {
  if (!Pending(unit)) return Verdict::kIgnored;
  Entry& e = units_.at(unit);
  if (e.state == State::kOut) {
    if (e.worker != worker) *holder = e.worker;
    --out_;
  } else {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), unit));
  }
  Move(e, State::kDone);
  e.expanded = result.stats().expanded();
  e.progress.Clear();
  ++done_;
  Count(result.stats(), worker);
  if (result.status() == "solved") {
    solution_ = result;
    return Verdict::kSolved;
  }
  if (next_bound == 0) {
    e.empty = true;
  } else if (next_bound_ == 0 || next_bound < next_bound_) {
    next_bound_ = next_bound;
  }
  if (done_ < units_.size()) return Verdict::kWait;
  ++iterations_;
  if (next_bound_ == 0) return Verdict::kExhausted;
  NextThreshold(next_bound_);
  return Verdict::kNextBound;
}

void SplitJob::NextThreshold(int bound) {
  uint64_t total = 0;
  for (const auto& [id, e] : units_) total += e.expanded;
  const double share = static_cast<double>(total) / static_cast<double>(kUnitsPerWorker * max_out_);
  // A unit and what was handed back from it are one subtree again: its
  // nodes are theirs together, and it is empty only if they all were.
  for (auto& [id, e] : units_) {
    if (e.origin == id) continue;
    Entry& origin = units_.at(e.origin);
    origin.expanded += e.expanded;
    origin.empty = origin.empty && e.empty;
  }
  std::vector<std::vector<Dir>> next;
  size_t left = units_.size();
  for (auto& [id, e] : units_) {
    --left;
    if (e.origin != id || e.empty) continue;
    // A unit that expanded its root and found nothing has no goal at its
    // root, so its children cover everything it did.
    const bool cut =
        e.expanded >= kMinNodesToCut && static_cast<double>(e.expanded) > share && next.size() + left + 4 <= kMaxUnits;
    std::vector<std::vector<Dir>> children;
    if (cut) children = SplitSubtree(p_.start, p_.goal, p_.pruning, e.prefix);
    if (children.empty()) {
      next.push_back(std::move(e.prefix));
    } else {
      for (std::vector<Dir>& child : children) next.push_back(std::move(child));
    }
  }
  units_.clear();
  waiting_.clear();
  out_ = 0;
  done_ = 0;
  next_bound_ = 0;
  bound_ = bound;
  threshold_began_ = absl::Now();
  for (std::vector<Dir>& prefix : next) Queue(std::move(prefix));
}

v1::Checkpoint SplitJob::Checkpoint() const {
  v1::Checkpoint c;
  c.set_bound(bound_);
  c.set_expanded(p_.resume.expanded() + expanded_);
  c.set_generated(p_.resume.generated() + generated_);
  c.set_iterations(p_.resume.iterations() + iterations_);
  return c;
}

v1::Result SplitJob::Result(const std::string& status, absl::Time now) const {
  v1::Result r;
  if (solution_.status() == "solved") {
    r = solution_;
  } else {
    r.set_status(status);
    r.set_algorithm(p_.algorithm);
    r.set_heuristic(p_.heuristic);
  }
  v1::Stats* s = r.mutable_stats();
  s->Clear();
  s->set_expanded(p_.resume.expanded() + expanded_);
  s->set_generated(p_.resume.generated() + generated_);
  s->set_max_open(max_open_);
  s->set_iterations(p_.resume.iterations() + iterations_ + (solution_.status() == "solved" ? 1 : 0));
  const absl::Duration elapsed = now - p_.started;
  s->set_elapsed_ms(absl::ToDoubleMilliseconds(elapsed));
  if (elapsed > absl::ZeroDuration()) {
    s->set_nodes_per_second(static_cast<double>(generated_) / absl::ToDoubleSeconds(elapsed));
  }
  s->set_resumed_from_bound(p_.resume.bound());
  s->set_workers(static_cast<int32_t>(workers_.size()));
  s->set_work_units(work_units_);
  return r;
}

bool SplitJob::ProgressDue(absl::Time now, absl::Duration interval) {
  if (now - last_progress_ < interval) return false;
  last_progress_ = now;
  return true;
}

}  // namespace npuzzle
