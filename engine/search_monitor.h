// SearchMonitor enforces one search's limits (nodes, time, memory,
// cancellation) and feeds its progress observer. Each search thread counts
// its own work in a WorkCounter and checks in only when the allowance the
// monitor granted runs out, so the hot loop pays one compare per node.
#ifndef NPUZZLE_ENGINE_SEARCH_MONITOR_H_
#define NPUZZLE_ENGINE_SEARCH_MONITOR_H_

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/search.h"

namespace npuzzle {

// One thread's running totals, and how far it may go before checking in.
struct WorkCounter {
  uint64_t expanded = 0;
  uint64_t generated = 0;
  uint64_t duplicates = 0;
  uint64_t open_size = 0;
  uint64_t max_open = 0;
  uint64_t memory_bytes = 0;
  int best_h = INT_MAX;
  uint64_t allowed = 0;  // check in before expanding node number `allowed`
  // What check-ins have handed to the monitor: the thread's own totals
  // are these plus `expanded` and `generated`.
  uint64_t expanded_flushed = 0;
  uint64_t generated_flushed = 0;

  // True while the thread may expand one more node; the caller then counts
  // it (++expanded).
  template <class Monitor>
  bool MayExpand(Monitor& monitor) {
    if (expanded < allowed) [[likely]]
      return true;
    bool ok;
    *this = CheckedIn(monitor, *this, &ok);
    return ok;
  }
  void NoteOpen(uint64_t size) {
    open_size = size;
    max_open = std::max(max_open, size);
  }
  void NoteH(int h) {
    if (h < best_h) [[unlikely]]
      best_h = h;
  }

 private:
  // The monitor is handed a copy, out of line, so that the counter's
  // address never escapes: the compiler may then keep its fields in
  // registers through a hot loop, where any byte store could otherwise
  // alias them.
  template <class Monitor>
  [[gnu::noinline]] static WorkCounter CheckedIn(Monitor& monitor, WorkCounter c, bool* ok) {
    *ok = monitor.CheckIn(c);
    return c;
  }
};

class SearchMonitor {
 public:
  explicit SearchMonitor(const SearchOptions& options);

  // Records the work `c` did since it last checked in, checks every limit
  // and calls the observer when due. Returns false when the search must
  // stop (stop_status() says why); otherwise raises c.allowed.
  bool CheckIn(WorkCounter& c);

  // For structures about to grow: false (and the search stops with
  // memory_limit) when `bytes` would exceed the memory limit.
  bool FitsMemory(uint64_t bytes);

  // For work that counts no nodes (building a table): true, and the
  // search stopped, once it is cancelled or past its deadline.
  bool Interrupted();

  void Stop(SearchStatus why);
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
  SearchStatus stop_status() const;

  void SetBound(int bound) { bound_.store(bound, std::memory_order_relaxed); }
  // An iterative-deepening search begins its pass at `bound`. Flushes `c`,
  // so the sizes of the finished passes, from which progress estimates the
  // current one's, are exact.
  void StartIteration(int bound, WorkCounter& c);

  // Flushes `c` one last time and fills in the totals and timings.
  SearchStats Finish(WorkCounter& c, int start_h);
  // The search's outcome: solved with `path` when there is one, else why it
  // stopped, else `exhausted` (the search ran out of states to try).
  SearchOutcome Conclude(WorkCounter& c, int start_h, std::optional<std::vector<Dir>> path, SearchStatus exhausted);
  // For threads that finish before the caller's own counter does.
  void Flush(WorkCounter& c);

  // Work so far (expanded, generated, iterations): what has been flushed
  // plus `c`'s share.
  SearchStats Totals(const WorkCounter& c) const;

 private:
  void FlushLocked(WorkCounter& c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records why and stops when cancelled or past the deadline.
  bool InterruptedLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Progress SnapshotLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SearchOptions& options_;
  const absl::Time start_;
  const absl::Time deadline_;

  std::atomic<bool> stopped_{false};
  std::atomic<int> bound_{0};
  std::atomic<int> iterations_{0};

  mutable absl::Mutex mu_;
  SearchStatus stop_status_ ABSL_GUARDED_BY(mu_) = SearchStatus::kSolved;
  SearchStats totals_ ABSL_GUARDED_BY(mu_);
  uint64_t open_size_ ABSL_GUARDED_BY(mu_) = 0;
  int best_h_ ABSL_GUARDED_BY(mu_) = INT_MAX;
  uint64_t granted_ ABSL_GUARDED_BY(mu_) = 0;  // expansions handed out
  uint64_t chunk_ ABSL_GUARDED_BY(mu_) = 256;
  absl::Time last_check_in_ ABSL_GUARDED_BY(mu_);
  absl::Time next_progress_ ABSL_GUARDED_BY(mu_);
  // The current pass's start, and the nodes of the two passes before it.
  absl::Time pass_began_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t pass_began_expanded_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t last_pass_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t pass_before_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_SEARCH_MONITOR_H_
