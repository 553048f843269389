#include "engine/search_monitor.h"

namespace npuzzle {
namespace {

// Allowances adapt so a thread checks in every few milliseconds whatever a
// node costs: often enough to stop within 50 ms of a cancel, rarely enough
// to cost nothing measurable.
constexpr uint64_t kMinChunk = 16;
constexpr uint64_t kMaxChunk = uint64_t{1} << 18;
constexpr absl::Duration kTargetCheckInGap = absl::Milliseconds(2);

}  // namespace

SearchMonitor::SearchMonitor(const SearchOptions& options)
    : options_(options),
      start_(absl::Now()),
      deadline_(options.limits.max_time == absl::InfiniteDuration() ? absl::InfiniteFuture()
                                                                    : start_ + options.limits.max_time) {
  absl::MutexLock lock(&mu_);
  last_check_in_ = start_;
  next_progress_ = start_ + options_.progress_interval;
}

void SearchMonitor::Stop(SearchStatus why) {
  absl::MutexLock lock(&mu_);
  if (!stopped_.load(std::memory_order_relaxed)) {
    stop_status_ = why;
    stopped_.store(true, std::memory_order_relaxed);
  }
}

SearchStatus SearchMonitor::stop_status() const {
  absl::MutexLock lock(&mu_);
  return stop_status_;
}

bool SearchMonitor::FitsMemory(uint64_t bytes) {
  const uint64_t limit = options_.limits.max_memory_bytes;
  if (limit == 0 || bytes <= limit) return true;
  Stop(SearchStatus::kMemoryLimit);
  return false;
}

void SearchMonitor::FlushLocked(WorkCounter& c) {
  totals_.expanded += c.expanded;
  totals_.generated += c.generated;
  totals_.duplicates += c.duplicates;
  totals_.max_open = std::max(totals_.max_open, c.max_open);
  open_size_ = c.open_size;
  best_h_ = std::min(best_h_, c.best_h);
  // Allowances are handed out relative to the thread's own count, so the
  // part it did not use goes back to the pool.
  granted_ -= c.allowed - c.expanded;
  c.expanded_flushed += c.expanded;
  c.generated_flushed += c.generated;
  c.expanded = c.generated = c.duplicates = 0;
  c.allowed = 0;
}

void SearchMonitor::Flush(WorkCounter& c) {
  absl::MutexLock lock(&mu_);
  FlushLocked(c);
}

void SearchMonitor::StartIteration(int bound, WorkCounter& c) {
  SetBound(bound);
  iterations_.fetch_add(1, std::memory_order_relaxed);
  absl::MutexLock lock(&mu_);
  FlushLocked(c);
  if (pass_began_ != absl::InfinitePast()) {
    pass_before_ = last_pass_;
    last_pass_ = totals_.expanded - pass_began_expanded_;
  }
  pass_began_ = absl::Now();
  pass_began_expanded_ = totals_.expanded;
}

Progress SearchMonitor::SnapshotLocked() const {
  Progress p;
  // IDA*'s passes grow by about the same factor each (the heuristic's
  // branching factor), so the current one should take about the last one
  // times the last growth. The estimate is of this pass: the search ends
  // in it if the answer is this long, and starts a larger one otherwise.
  if (pass_before_ > 0 && last_pass_ > 0) {
    const double growth = std::max(1.0, static_cast<double>(last_pass_) / static_cast<double>(pass_before_));
    const double expected = static_cast<double>(last_pass_) * growth;
    const double done = static_cast<double>(totals_.expanded - pass_began_expanded_);
    p.fraction_done = std::min(0.99, done / expected);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - pass_began_);
    if (done > 0 && done < expected && seconds > 0) p.time_left = absl::Seconds((expected - done) * seconds / done);
  }
  p.expanded = totals_.expanded;
  p.generated = totals_.generated;
  p.open_size = open_size_;
  p.bound = bound_.load(std::memory_order_relaxed);
  p.best_h = best_h_ == INT_MAX ? 0 : best_h_;
  p.elapsed = absl::Now() - start_;
  const double seconds = absl::ToDoubleSeconds(p.elapsed);
  p.nodes_per_second = seconds > 0 ? p.generated / seconds : 0;
  return p;
}

bool SearchMonitor::CheckIn(WorkCounter& c) {
  if (stopped()) return false;
  std::optional<Progress> due;
  {
    absl::MutexLock lock(&mu_);
    FlushLocked(c);
    const absl::Time now = absl::Now();
    if (InterruptedLocked(now)) {
      c.allowed = 0;
    } else if (options_.limits.max_memory_bytes != 0 && c.memory_bytes > options_.limits.max_memory_bytes) {
      stop_status_ = SearchStatus::kMemoryLimit;
    } else if (options_.limits.max_expanded != 0 && granted_ >= options_.limits.max_expanded) {
      stop_status_ = SearchStatus::kNodeLimit;
    } else {
      if (now - last_check_in_ < kTargetCheckInGap) {
        chunk_ = std::min(chunk_ * 2, kMaxChunk);
      } else if (now - last_check_in_ > 4 * kTargetCheckInGap) {
        chunk_ = std::max(chunk_ / 2, kMinChunk);
      }
      last_check_in_ = now;
      uint64_t grant = chunk_;
      if (options_.limits.max_expanded != 0) {
        grant = std::min(grant, options_.limits.max_expanded - granted_);
      }
      granted_ += grant;
      c.allowed = c.expanded + grant;
      if (options_.on_progress && now >= next_progress_) {
        next_progress_ = now + options_.progress_interval;
        due = SnapshotLocked();
      }
    }
    if (c.allowed == 0) stopped_.store(true, std::memory_order_relaxed);
  }
  if (stopped()) return false;
  if (due) options_.on_progress(*due);
  return true;
}

bool SearchMonitor::InterruptedLocked(absl::Time now) {
  if (options_.cancel != nullptr && options_.cancel->cancelled()) {
    stop_status_ = SearchStatus::kCancelled;
  } else if (now >= deadline_) {
    stop_status_ = SearchStatus::kTimeLimit;
  } else {
    return false;
  }
  stopped_.store(true, std::memory_order_relaxed);
  return true;
}

bool SearchMonitor::Interrupted() {
  if (stopped()) return true;
  absl::MutexLock lock(&mu_);
  return InterruptedLocked(absl::Now());
}

SearchStats SearchMonitor::Totals(const WorkCounter& c) const {
  absl::MutexLock lock(&mu_);
  SearchStats s = totals_;
  s.expanded += c.expanded;
  s.generated += c.generated;
  s.iterations = iterations_.load(std::memory_order_relaxed);
  return s;
}

SearchStats SearchMonitor::Finish(WorkCounter& c, int start_h) {
  absl::MutexLock lock(&mu_);
  FlushLocked(c);
  SearchStats stats = totals_;
  stats.iterations = iterations_.load(std::memory_order_relaxed);
  stats.start_h = start_h;
  stats.elapsed = absl::Now() - start_;
  const double seconds = absl::ToDoubleSeconds(stats.elapsed);
  stats.nodes_per_second = seconds > 0 ? stats.generated / seconds : 0;
  return stats;
}

SearchOutcome SearchMonitor::Conclude(WorkCounter& c, int start_h, std::optional<std::vector<Dir>> path,
                                      SearchStatus exhausted) {
  SearchOutcome out;
  if (path) {
    out.status = SearchStatus::kSolved;
    out.moves = std::move(*path);
  } else {
    out.status = stopped() ? stop_status() : exhausted;
  }
  out.stats = Finish(c, start_h);
  return out;
}

}  // namespace npuzzle
