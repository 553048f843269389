// What every search takes (limits, seed, progress observer, cancellation)
// and what it returns (status, moves, statistics).
#ifndef NPUZZLE_ENGINE_SEARCH_H_
#define NPUZZLE_ENGINE_SEARCH_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/moves.h"

namespace npuzzle {

enum class SearchStatus {
  kSolved,
  kUnsolvable,
  kNodeLimit,
  kTimeLimit,
  kMemoryLimit,
  kDepthLimit,
  kCancelled,
};

// "solved", "unsolvable", "node_limit", ...: the names results carry.
absl::string_view StatusName(SearchStatus s);
std::optional<SearchStatus> StatusFromName(absl::string_view name);
// A search stopped by one of its limits (nodes, time, memory, depth).
bool IsLimit(SearchStatus s);

struct SearchLimits {
  uint64_t max_expanded = 0;  // 0: no limit
  absl::Duration max_time = absl::InfiniteDuration();
  uint64_t max_memory_bytes = 0;  // open + closed sets; 0: no limit
  int max_depth = 0;              // depth-first searches; 0: no limit
};

// A snapshot handed to the progress observer.
struct Progress {
  uint64_t expanded = 0;
  uint64_t generated = 0;
  uint64_t open_size = 0;
  int bound = 0;   // current f-bound (best-first) or threshold (IDA*)
  int best_h = 0;  // lowest h seen so far
  absl::Duration elapsed;
  double nodes_per_second = 0;  // generated per second
  // Set while the solve does something other than search (building a
  // pattern table), saying what and how far: the counts above are then 0.
  std::string activity;
  // auto and anytime: the best answer's length so far (0: none yet) and
  // the proven lower bound on the optimal length.
  int best_length = 0;
  int lower_bound = 0;
  // Where the search can tell: how much of its work is done (0 to 1) and
  // the time that is left at its present rate. IDA*: of the current
  // threshold, from the growth of those before it; anytime: of its time
  // limit, or of the way from its first answer's gap to max_gap if further.
  std::optional<double> fraction_done;
  std::optional<absl::Duration> time_left;
};

// A finished iteration of an iterative-deepening search: no solution is
// shorter than `next_bound`, so a search resumed there (SearchOptions::
// resume_bound) finds the same optimal length. The counts are this run's.
struct IterationCheckpoint {
  int bound = 0;  // the bound the finished iteration searched
  int next_bound = 0;
  uint64_t expanded = 0;
  uint64_t generated = 0;
  int iterations = 0;
};

// One subtree of an IDA* iteration searched to its end without a
// solution. A large iteration is split at a frontier of nodes a few moves
// below the start, the same for the same board, pruning and threads
// (`frontier` is its fingerprint), so a search resumed at `bound`
// (SearchOptions::resume_subtrees) need not search this one again: a
// restart then loses the subtrees under way, not the whole iteration.
struct SubtreeCheckpoint {
  int bound = 0;
  uint64_t frontier = 0;
  int index = 0;          // the subtree's place in the frontier
  int next_bound = 0;     // the least f above `bound` seen in it (INT_MAX: none)
  uint64_t expanded = 0;  // the subtree's own nodes
  uint64_t generated = 0;
};

// Set from any thread; searches notice within a few milliseconds.
class CancelToken {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

// Lets another thread ask a subtree pass (SearchOptions::SubtreePass) to
// give part of its work away, for idle processes to search: at its next
// check-in with the monitor (every few milliseconds) the pass takes the
// untried moves of its shallowest node that has any, which root the
// largest subtrees it has not begun, and hands their move sequences from
// the start to `give`. If `give` returns true the pass never searches
// them: whoever took them must. If it returns false (they could not be
// passed on) the pass keeps them.
class HandBack {
 public:
  explicit HandBack(std::function<bool(std::vector<std::vector<Dir>>)> give) : give_(std::move(give)) {}
  void Request() { wanted_.store(true, std::memory_order_relaxed); }
  // For the pass: whether a request came since the last call.
  bool TakeRequest() {
    return wanted_.load(std::memory_order_relaxed) && wanted_.exchange(false, std::memory_order_relaxed);
  }
  bool Give(std::vector<std::vector<Dir>> prefixes) const { return give_(std::move(prefixes)); }

 private:
  const std::function<bool(std::vector<std::vector<Dir>>)> give_;
  std::atomic<bool> wanted_{false};
};

struct SearchOptions {
  SearchLimits limits;
  std::optional<uint64_t> seed;  // set: shuffle equal successors reproducibly
  std::function<void(const Progress&)> on_progress;
  absl::Duration progress_interval = absl::Milliseconds(250);
  const CancelToken* cancel = nullptr;
  int threads = 1;  // searches that can split their work use this many
  // IDA*: start at this bound, every lower one being known to hold no
  // solution (a checkpoint of an earlier run); 0 or below h(start): at
  // h(start). A bound above the optimal length would lose optimality, so
  // only a checkpoint's next_bound belongs here.
  int resume_bound = 0;
  // IDA*: called on the search's thread after each iteration that found
  // nothing, before the next one starts.
  std::function<void(const IterationCheckpoint&)> on_checkpoint;
  // IDA*: set, large iterations are split at a frontier even on one
  // thread, a finer one (kCheckpointSubtrees), and this is called, on a
  // search thread and one call at a time, as each subtree finishes
  // without a solution.
  std::function<void(const SubtreeCheckpoint&)> on_subtree_checkpoint;
  // IDA*: the subtrees of the resume_bound iteration that an earlier run
  // finished (its on_subtree_checkpoint calls). Set, iterations are split
  // as with on_subtree_checkpoint; those of the frontier this run grows
  // are skipped, their next bounds counted; any others (another frontier)
  // are ignored, which costs time but never an answer.
  std::vector<SubtreeCheckpoint> resume_subtrees;
  // IDA*: move sequences up to this long (at most MovePruning::kMaxLength)
  // are checked for shorter or earlier equivalents, which large searches
  // then skip (engine/move_pruning.h); 2 skips only the move that undoes
  // the last one.
  int pruning_length = 14;
  // IDA*: the machine is built (once per shape and length in a process)
  // only after the search has generated this many nodes, so that small
  // searches never wait for it: of up to MovePruning::kQuickLength moves
  // at once (at most 50 ms), and of the full length on a thread of its own
  // (up to about 2 s and 256 MB on 5x5 and larger boards), taken up by the
  // first pass after it is ready. At 0, the full length from the start.
  // Under a memory limit below a build's, a shorter machine or none
  // (ida_star.h's PruningLength).
  uint64_t pruning_after_generated = 5000000;
  // Set: one IDA* pass at this bound over only the subtree below the node
  // these moves reach from the start (a work unit of a job split across
  // processes, engine/work_split.h), with the pruning machine from the
  // start. Finding nothing, it ends kDepthLimit with the next bound.
  struct SubtreePass {
    std::vector<Dir> prefix;
    int bound = 0;
    HandBack* hand_back = nullptr;  // may be null: the pass gives nothing away
  };
  std::optional<SubtreePass> subtree;
};

struct SearchStats {
  uint64_t expanded = 0;
  uint64_t generated = 0;
  uint64_t duplicates = 0;  // successors dropped as already seen
  uint64_t max_open = 0;    // peak open set (or stack depth for IDA*)
  int iterations = 0;       // iterative deepening passes
  int start_h = 0;
  // IDA* resumed with resume_subtrees: those of its frontier it skipped.
  int resumed_subtrees = 0;
  absl::Duration elapsed;
  double nodes_per_second = 0;
};

struct SearchOutcome {
  SearchStatus status = SearchStatus::kSolved;
  std::vector<Dir> moves;
  SearchStats stats;
  // A subtree pass that found nothing: the smallest f above its bound
  // (0: nothing crossed it, so no solution lies below its root).
  int next_bound = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_SEARCH_H_
