// IDA*: depth-first passes bounded by f = g + h, each pass raising the
// bound to the smallest f that crossed it; with several threads, large
// passes are split into subtrees below a fixed depth (and, with subtree
// checkpoints, finer and on one thread too, so that a restart resumes an
// iteration without the subtrees it had finished). Memory is one frame per depth
// (an explicit stack, no recursion), the previous move is never undone
// (and, in large searches, no move sequence the pruning machine of
// engine/move_pruning.h rejects is followed), and the heuristic updates
// incrementally along the path. Over the zero heuristic this is iterative
// deepening (the registry's "iddfs").
#ifndef NPUZZLE_ENGINE_ALGORITHMS_IDA_STAR_H_
#define NPUZZLE_ENGINE_ALGORITHMS_IDA_STAR_H_

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/synchronization/mutex.h"
#include "engine/heuristic.h"
#include "engine/move_pruning.h"
#include "engine/search_monitor.h"
#include "engine/search_problem.h"
#include "engine/successor_order.h"

namespace npuzzle {

// One bounded depth-first pass below a node. Parallel IDA* runs one per
// thread over different subtrees.
template <Heuristic H>
class BoundedDfs {
 public:
  using HNode = typename H::Node;
  struct Pass {
    bool found = false;
    bool stopped = false;
    int next_bound = INT_MAX;  // smallest f above the bound seen
    std::vector<Dir> path;     // from the pass's root, when found
    int deepest = 0;
  };

  BoundedDfs(const Puzzle& puzzle, const H& heuristic, std::optional<uint64_t> seed)
      : puzzle_(puzzle), heuristic_(heuristic), order_(seed) {}

  // Passes below the node `prefix` reaches from the start give work away
  // when `hand_back` asks (see HandBack).
  void AllowHandBack(HandBack* hand_back, std::vector<Dir> prefix) {
    hand_back_ = hand_back;
    hand_back_prefix_ = std::move(prefix);
  }

  // Explores below `root` (at depth g0, entered by move `entry`, or
  // kNoMove at the start) every path with f <= bound, until a goal is
  // found or the monitor stops the search. With `pruning`, the machine
  // starts in state `machine`; without, only moves that undo the last one
  // are skipped.
  Pass Run(const Tiles& root, const HNode& root_h, int g0, uint8_t entry, const MovePruning* pruning, int machine,
           int bound, WorkCounter& counter, SearchMonitor& monitor) {
    if (order_.shuffles()) {
      return pruning ? Search<true, true>(root, root_h, g0, entry, pruning, machine, bound, counter, monitor)
                     : Search<false, true>(root, root_h, g0, entry, pruning, machine, bound, counter, monitor);
    }
    return pruning ? Search<true, false>(root, root_h, g0, entry, pruning, machine, bound, counter, monitor)
                   : Search<false, false>(root, root_h, g0, entry, pruning, machine, bound, counter, monitor);
  }

 private:
  // Run, compiled with and without the pruning machine (a lookup per child
  // that prunes nothing more would cost the plain search 13% of its speed)
  // and with and without shuffled successor orders (a test per node).
  // Kept out of line: inlined into its caller, once for each, it grew that
  // past what GCC will inline into, and the successor step stopped inlining.
  template <bool kPrunes, bool kShuffles>
  ABSL_ATTRIBUTE_NOINLINE Pass Search(const Tiles& root, const HNode& root_h, int g0, uint8_t entry,
                                      const MovePruning* pruning, int machine, int bound, WorkCounter& counter,
                                      SearchMonitor& monitor) {
    Pass pass;
    const int root_f = g0 + H::Value(root_h);
    if (root_f > bound) {
      pass.next_bound = root_f;
      return pass;
    }
    if (H::Value(root_h) == 0 && puzzle_.IsGoal(root)) {
      pass.found = true;
      return pass;
    }
    const size_t frames = static_cast<size_t>(bound - g0 + 2);
    if (stack_.size() < frames) stack_.resize(frames);
    // The deepest frame written tells how deep the pass went, which costs
    // the loop nothing, where a running maximum took a test per node.
    for (size_t k = 1; k < frames; ++k) stack_[k].entry = kUnused;

    // Locals, not members: the tile writes below are byte stores, which
    // may alias anything in memory, so whatever the loop reads through
    // `this` would be reloaded after every move.
    const Puzzle& puzzle = puzzle_;
    const H& heuristic = heuristic_;
    Tiles s = root;
    // The counts every node changes, as scalars rather than fields of a
    // WorkCounter, which GCC kept in memory: a load and a store a count.
    uint64_t expanded = counter.expanded, generated = counter.generated, allowed = counter.allowed;
    int best_h = counter.best_h;
    int next_bound = INT_MAX;
    int g = g0;
    int blank = root.blank();
    Frame* const base = stack_.data();
    Frame* f = base;
    *f = Frame{puzzle.Expand(root.blank(), entry, order_.Pick()), root_h, entry, root.blank(), machine};
    // The inner loop makes no calls, so that GCC keeps its variables in
    // registers (a call may change any register that functions need not
    // preserve): it leaves to check in with the monitor (and to give work
    // away, when asked), and the goal's path is read from the stack after it.
    Dir last = Dir::kUp;  // the move onto the goal
    for (;;) {
      // The node just entered (the root, at first) counts once the
      // monitor allows it.
      counter.expanded = expanded;
      counter.generated = generated;
      counter.best_h = best_h;
      const bool goes_on = counter.MayExpand(monitor);
      expanded = counter.expanded;
      generated = counter.generated;
      allowed = counter.allowed;
      if (!goes_on) {
        pass.stopped = true;
        break;
      }
      if (hand_back_ != nullptr && hand_back_->TakeRequest()) GiveAway(base, f, pruning);
      ++expanded;
      for (;;) {
        MoveList::Step step;
        if (!f->successors.Next(&step)) {
          if (f == base) break;
          Slide(s, blank, f->parent_blank);
          blank = f->parent_blank;
          --f;
          --g;
          continue;
        }
        const Dir d = step.dir;
        int child_machine = MovePruning::kStart;
        if constexpr (kPrunes) {
          child_machine = pruning->Next(f->machine, d);
          if (child_machine == MovePruning::kPruned) continue;
        }
        const int to = step.to;
        const int tile = Puzzle::TileAt(s, to);
        ++generated;
        HNode child;
        if constexpr (TwoStageHeuristic<H>) {
          // A child whose first estimate already puts it over the bound,
          // and at or above the smallest f seen over it, can change
          // nothing: the rest of its estimate is not worth a lookup.
          // So is one whose later estimates do, one at a time.
          const int enough = std::max(bound + 1, next_bound) - (g + 1);
          child = heuristic.MoveFirst(s, f->node, tile, to, blank);
          if (H::FirstValue(child) >= enough) continue;
          if (!heuristic.MoveRest(s, f->node, tile, to, blank, &child, enough)) continue;
        } else {
          child = heuristic.Move(s, f->node, tile, to, blank);
        }
        const int h = H::Value(child);
        const int child_f = g + 1 + h;
        if (child_f > bound) {
          if (child_f < next_bound) next_bound = child_f;
          continue;
        }
        Slide(s, blank, to);
        if (h == 0 && puzzle.IsGoal(s)) {
          pass.found = true;
          last = d;
          break;
        }
        ++expanded;
        best_h = std::min(best_h, h);
        ++f;
        ++g;
        // Field by field: a temporary Frame copied in whole stalled on
        // its own partial writes.
        f->successors = puzzle.Expand(to, static_cast<uint8_t>(d), kShuffles ? order_.Pick() : 0);
        f->node = child;
        f->entry = static_cast<int>(d);
        f->parent_blank = blank;
        f->machine = child_machine;
        blank = to;
        if (expanded > allowed) [[unlikely]]
          break;
      }
      if (expanded <= allowed) break;  // the pass is over
      --expanded;
    }
    if (pass.found) {
      for (Frame* p = base + 1; p <= f; ++p) pass.path.push_back(static_cast<Dir>(p->entry));
      pass.path.push_back(last);
    }
    counter.expanded = expanded;
    counter.generated = generated;
    counter.best_h = best_h;
    pass.next_bound = next_bound;
    size_t written = frames - 1;
    while (written > 0 && stack_[written].entry == kUnused) --written;
    pass.deepest = g0 + static_cast<int>(written);
    return pass;
  }

  struct Frame;

  // Hands the untried moves of the shallowest frame that has any to
  // hand_back_, leaving out those the machine prunes (the pass would skip
  // them too); once taken, the frame forgets them.
  ABSL_ATTRIBUTE_NOINLINE void GiveAway(Frame* base, Frame* deepest, const MovePruning* pruning) {
    for (Frame* frame = base; frame <= deepest; ++frame) {
      std::vector<std::vector<Dir>> given;
      Expansion untried = frame->successors;
      for (MoveList::Step step; untried.Next(&step);) {
        if (pruning != nullptr && pruning->Next(frame->machine, step.dir) == MovePruning::kPruned) continue;
        std::vector<Dir> prefix = hand_back_prefix_;
        for (Frame* p = base + 1; p <= frame; ++p) prefix.push_back(static_cast<Dir>(p->entry));
        prefix.push_back(step.dir);
        given.push_back(std::move(prefix));
      }
      if (given.empty()) continue;
      if (hand_back_->Give(std::move(given))) frame->successors = Expansion();
      return;
    }
  }

  static void Slide(Tiles& s, int blank, int to) {
    if constexpr (ReadsTiles<H>()) {
      Puzzle::Slide(s, blank, to);
    } else {
      Puzzle::SlideCells(s, blank, to);
    }
  }

  // 24 bytes with Manhattan's int node, the successors first so that no
  // padding follows the node.
  struct Frame {
    Expansion successors;  // those not yet tried
    HNode node;
    // Ints rather than bytes: a byte stored beside another and read back
    // as part of a wider load stalls store forwarding on every node.
    int entry;         // the move that reached this node, or kNoMove
    int parent_blank;  // where the blank goes back to on the way up
    int machine;       // the move-pruning state
  };
  static constexpr int kUnused = -1;  // an entry no frame written by a pass holds

  const Puzzle& puzzle_;
  const H& heuristic_;
  SuccessorOrder order_;
  std::vector<Frame> stack_;
  HandBack* hand_back_ = nullptr;
  std::vector<Dir> hand_back_prefix_;
};

// The nodes a fixed number of moves below the start (never undoing a move),
// each the root of a subtree that parallel passes hand to threads.
template <Heuristic H>
struct Frontier {
  struct Node {
    Tiles tiles;
    typename H::Node h;
    uint8_t entry;
    int machine;            // the move-pruning state
    std::vector<Dir> path;  // from the start
  };
  int depth = 0;
  std::vector<Node> nodes;
  uint64_t fingerprint = 0;  // of its nodes' paths, in order

  // Grows level by level until there are `enough` subtrees or `max_depth`
  // is reached. Starts that are this close to the goal never get here.
  static Frontier Grow(const SearchProblem<H>& p, const MovePruning* pruning, size_t enough, int max_depth,
                       WorkCounter& c) {
    Frontier f;
    f.nodes.push_back({p.start, p.heuristic.Start(p.start), kNoMove, MovePruning::kStart, {}});
    while (f.nodes.size() < enough && f.depth < max_depth) {
      std::vector<Node> next;
      for (const Node& n : f.nodes) {
        ++c.expanded;
        Expansion successors = p.puzzle.Expand(n.tiles.blank(), n.entry);
        for (MoveList::Step step; successors.Next(&step);) {
          const int machine = pruning ? pruning->Next(n.machine, step.dir) : n.machine;
          if (machine == MovePruning::kPruned) continue;
          const int blank = n.tiles.blank();
          Node child{n.tiles, p.heuristic.Move(n.tiles, n.h, Puzzle::TileAt(n.tiles, step.to), step.to, blank),
                     static_cast<uint8_t>(step.dir), machine, n.path};
          Puzzle::Slide(child.tiles, blank, step.to);
          child.path.push_back(step.dir);
          next.push_back(std::move(child));
          ++c.generated;
        }
      }
      f.nodes = std::move(next);
      ++f.depth;
    }
    // Two frontiers with the same paths in the same order have the same
    // subtrees at the same places, which is all a resumed pass relies on.
    f.fingerprint = 0xcbf29ce484222325ULL;
    auto mix = [&f](uint64_t v) { f.fingerprint = (f.fingerprint ^ v) * 0x100000001b3ULL; };
    mix(f.nodes.size());
    for (const Node& n : f.nodes) {
      mix(kNumDirs + 1);  // between paths
      for (const Dir d : n.path) mix(static_cast<uint64_t>(d));
    }
    return f;
  }
};

// The subtrees of a frontier that an earlier run finished in the iteration
// at `bound` (SearchOptions::resume_subtrees): which to skip, and the
// least next bound among them, which the pass's own must not lose.
struct FinishedSubtrees {
  std::vector<bool> skip;
  int skipped = 0;
  int next_bound = INT_MAX;

  static FinishedSubtrees Of(const std::vector<SubtreeCheckpoint>& done, uint64_t fingerprint, size_t size, int bound) {
    FinishedSubtrees f;
    f.skip.assign(size, false);
    for (const SubtreeCheckpoint& s : done) {
      if (s.bound != bound || s.frontier != fingerprint || s.index < 0 || static_cast<size_t>(s.index) >= size ||
          f.skip[s.index]) {
        continue;
      }
      f.skip[s.index] = true;
      ++f.skipped;
      f.next_bound = std::min(f.next_bound, s.next_bound);
    }
    return f;
  }
};

// One pass over every frontier subtree not in `finished`, on `threads`
// threads that take subtrees in turn. A solution found in a pass is as
// long as the bound, and no shorter one exists (the earlier passes proved
// it), so the first thread to find one ends the pass for all.
//
// The pass is complete only if every subtree was skipped or searched to
// its end; otherwise it is stopped, and its next bound means nothing. That
// is counted, not inferred from the subtrees' own passes: a stop can come
// between two subtrees, or before the first (a cancel seen while the
// pruning machine built), and then no subtree's pass says it stopped. Once
// a resumed pass that had skipped subtrees was so taken for a finished
// iteration, and its checkpoint moved the job past the optimal length.
template <Heuristic H>
typename BoundedDfs<H>::Pass ParallelPass(const SearchProblem<H>& p, const MovePruning* pruning,
                                          const Frontier<H>& frontier, const FinishedSubtrees& finished, int bound,
                                          SearchMonitor& monitor) {
  using Pass = typename BoundedDfs<H>::Pass;
  std::atomic<size_t> next{0};
  std::atomic<size_t> searched{0};  // subtrees searched to their end
  std::atomic<bool> found{false};
  absl::Mutex mu;
  Pass result;
  result.next_bound = finished.next_bound;
  auto work = [&](int thread) {
    std::optional<uint64_t> seed;
    if (p.options.seed) seed = *p.options.seed + thread;
    BoundedDfs<H> dfs(p.puzzle, p.heuristic, seed);
    WorkCounter c;
    Pass mine;
    for (size_t i; !found && !monitor.stopped() && (i = next++) < frontier.nodes.size();) {
      if (finished.skip[i]) continue;
      const auto& node = frontier.nodes[i];
      const uint64_t expanded_before = c.expanded_flushed + c.expanded;
      const uint64_t generated_before = c.generated_flushed + c.generated;
      Pass pass = dfs.Run(node.tiles, node.h, frontier.depth, node.entry, pruning, node.machine, bound, c, monitor);
      if (!pass.found && !pass.stopped) ++searched;
      if (!pass.found && !pass.stopped && p.options.on_subtree_checkpoint) {
        absl::MutexLock lock(&mu);
        p.options.on_subtree_checkpoint({bound, frontier.fingerprint, static_cast<int>(i), pass.next_bound,
                                         c.expanded_flushed + c.expanded - expanded_before,
                                         c.generated_flushed + c.generated - generated_before});
      }
      mine.next_bound = std::min(mine.next_bound, pass.next_bound);
      mine.deepest = std::max(mine.deepest, pass.deepest);
      if (pass.found && !found.exchange(true)) {
        mine.found = true;
        mine.path = node.path;
        mine.path.insert(mine.path.end(), pass.path.begin(), pass.path.end());
        monitor.Stop(SearchStatus::kSolved);  // tells the other threads
      }
      if (pass.stopped) mine.stopped = true;
    }
    monitor.Flush(c);
    absl::MutexLock lock(&mu);
    result.next_bound = std::min(result.next_bound, mine.next_bound);
    result.deepest = std::max(result.deepest, mine.deepest);
    result.stopped |= mine.stopped && !mine.found;
    if (mine.found) {
      result.found = true;
      result.path = std::move(mine.path);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < p.options.threads; ++t) threads.emplace_back(work, t);
  work(0);
  for (std::thread& t : threads) t.join();
  if (result.found) {
    result.stopped = false;
  } else if (searched + finished.skipped < frontier.nodes.size()) {
    result.stopped = true;
  }
  return result;
}

// The longest pruning machine the search may use, 0 for none: it is used
// only in large searches, and not under a memory limit below what its
// build may take (kMaxBuildBytes for the full length, far less for the
// quick one).
template <Heuristic H>
int PruningLength(const SearchProblem<H>& p) {
  const uint64_t memory_limit = p.options.limits.max_memory_bytes;
  const int length = p.options.pruning_length;
  if (length <= 2 || (memory_limit != 0 && memory_limit < MovePruning::kQuickBuildBytes)) return 0;
  const bool below_full_build = memory_limit != 0 && memory_limit < MovePruning::kMaxBuildBytes;
  return below_full_build ? std::min(length, MovePruning::kQuickLength) : length;
}

// One pass below the node SearchOptions::subtree names: a work unit, which
// is large by design, so the pruning machine runs from its first move.
template <Heuristic H>
SearchOutcome SubtreeSearch(const SearchProblem<H>& p) {
  const SearchOptions::SubtreePass& unit = *p.options.subtree;
  SearchMonitor monitor(p.options);
  WorkCounter c;
  // A shorter machine than the coordinator's, under a small memory limit,
  // prunes less, which never loses a solution.
  const int length = PruningLength(p);
  const MovePruning* pruning = length > 0 ? MovePruning::For(p.puzzle.rows(), p.puzzle.cols(), length,
                                                             [&monitor] { return monitor.Interrupted(); })
                                          : nullptr;
  Tiles root = p.start;
  uint8_t entry = kNoMove;
  int machine = MovePruning::kStart;
  for (const Dir d : unit.prefix) {
    // A sequence the machine rejects has an equivalent no longer, and no
    // later in order, whose subtree holds whatever this one would.
    if (pruning && (machine = pruning->Next(machine, d)) == MovePruning::kPruned) {
      return monitor.Conclude(c, 0, std::nullopt, SearchStatus::kDepthLimit);
    }
    Puzzle::Slide(root, root.blank(), p.puzzle.Neighbor(root.blank(), d));
    entry = static_cast<uint8_t>(d);
  }
  const typename H::Node root_h = p.heuristic.Start(root);
  monitor.StartIteration(unit.bound, c);
  BoundedDfs<H> dfs(p.puzzle, p.heuristic, p.options.seed);
  if (unit.hand_back != nullptr) dfs.AllowHandBack(unit.hand_back, unit.prefix);
  const int g0 = static_cast<int>(unit.prefix.size());
  typename BoundedDfs<H>::Pass pass = dfs.Run(root, root_h, g0, entry, pruning, machine, unit.bound, c, monitor);
  c.NoteOpen(pass.deepest);
  std::optional<std::vector<Dir>> path;
  if (pass.found) {
    path = unit.prefix;
    path->insert(path->end(), pass.path.begin(), pass.path.end());
  }
  SearchOutcome out = monitor.Conclude(c, H::Value(root_h), std::move(path), SearchStatus::kDepthLimit);
  if (!pass.found && !pass.stopped && pass.next_bound != INT_MAX) out.next_bound = pass.next_bound;
  return out;
}

template <Heuristic H>
SearchOutcome IterativeDeepeningAStar(const SearchProblem<H>& p) {
  if (p.options.subtree) return SubtreeSearch(p);
  // Passes smaller than this run on one thread: splitting them would cost
  // more than it saves, and it keeps short solutions out of the frontier.
  constexpr uint64_t kParallelAfterGenerated = 200000;
  constexpr size_t kSubtreesPerThread = 64;
  // Checkpointed by subtree, an iteration of hours loses minutes at most
  // to a restart, if its subtrees are this many (a few moves deeper).
  constexpr size_t kCheckpointSubtrees = 4096;
  // A run resuming from subtree records splits as the run that wrote them
  // did, or it could skip none of them.
  const bool checkpoint_subtrees =
      static_cast<bool>(p.options.on_subtree_checkpoint) || !p.options.resume_subtrees.empty();

  SearchMonitor monitor(p.options);
  WorkCounter c;
  const MovePruning* pruning = nullptr;
  const int pruning_length = PruningLength(p);
  bool pruning_started = false;
  std::optional<MachineBuild> longer;  // the full-length machine, while it builds
  BoundedDfs<H> dfs(p.puzzle, p.heuristic, p.options.seed);
  const typename H::Node root = p.heuristic.Start(p.start);
  const int start_h = H::Value(root);
  const int max_depth = p.options.limits.max_depth;
  std::optional<Frontier<H>> frontier;
  std::optional<std::vector<Dir>> path;
  SearchStatus exhausted = SearchStatus::kUnsolvable;
  int resumed_subtrees = 0;
  // Resumed above the start's estimate, the search has done the smaller
  // iterations in an earlier run: it is large, and gets from its first
  // pass what a large search gets once it has generated enough (both
  // threads, the full pruning machine). Counting this run's nodes alone,
  // it ran its first, largest pass on one thread and unpruned.
  const bool resumed = p.options.resume_bound > start_h;
  for (int bound = std::max(start_h, p.options.resume_bound);;) {
    if (max_depth != 0 && bound > max_depth) {
      exhausted = SearchStatus::kDepthLimit;
      break;
    }
    const uint64_t generated = monitor.Totals(c).generated;
    if (pruning_length > 0 && !pruning_started && (resumed || generated >= p.options.pruning_after_generated)) {
      // Mid-search, the quick machine at once and the full length on its
      // own thread; from the start (or resumed), the full length.
      pruning_started = true;
      const int quick = p.options.pruning_after_generated == 0 || resumed
                            ? pruning_length
                            : std::min(pruning_length, MovePruning::kQuickLength);
      pruning = MovePruning::For(p.puzzle.rows(), p.puzzle.cols(), quick, [&monitor] { return monitor.Interrupted(); });
      if (pruning_length > quick) longer.emplace(p.puzzle.rows(), p.puzzle.cols(), pruning_length);
      frontier.reset();  // grown again, without the subtrees the machine prunes
    }
    if (const MovePruning* full = longer ? longer->Ready() : nullptr) {
      pruning = full;
      longer.reset();
      frontier.reset();
    }
    // Every bound so far held no solution, and the frontier lies above this
    // one, so a solution found below the frontier is exactly `bound` long.
    if (!frontier && (p.options.threads > 1 || checkpoint_subtrees) &&
        (resumed || generated >= kParallelAfterGenerated)) {
      const size_t subtrees = kSubtreesPerThread * p.options.threads;
      frontier = Frontier<H>::Grow(p, pruning, checkpoint_subtrees ? std::max(subtrees, kCheckpointSubtrees) : subtrees,
                                   bound - 1, c);
    }
    monitor.StartIteration(bound, c);
    typename BoundedDfs<H>::Pass pass;
    if (frontier) {
      const FinishedSubtrees finished =
          FinishedSubtrees::Of(p.options.resume_subtrees, frontier->fingerprint, frontier->nodes.size(), bound);
      resumed_subtrees += finished.skipped;
      pass = ParallelPass(p, pruning, *frontier, finished, bound, monitor);
    } else {
      pass = dfs.Run(p.start, root, 0, kNoMove, pruning, MovePruning::kStart, bound, c, monitor);
    }
    c.NoteOpen(pass.deepest);
    if (pass.found) path = std::move(pass.path);
    if (pass.found || pass.stopped || pass.next_bound == INT_MAX) break;
    if (p.options.on_checkpoint) {
      const SearchStats so_far = monitor.Totals(c);
      p.options.on_checkpoint({bound, pass.next_bound, so_far.expanded, so_far.generated, so_far.iterations});
    }
    bound = pass.next_bound;
  }
  SearchOutcome out = monitor.Conclude(c, start_h, std::move(path), exhausted);
  out.stats.resumed_subtrees = resumed_subtrees;
  return out;
}

struct IdaStar {
  template <Heuristic H>
  static SearchOutcome Run(const SearchProblem<H>& p) {
    return IterativeDeepeningAStar(p);
  }
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ALGORITHMS_IDA_STAR_H_
