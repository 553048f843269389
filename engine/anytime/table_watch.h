// TableWatch: the pattern tables for an anytime solve's goal, from the
// moment this process holds them.
//
// Tables are never built inside a solve (6-6-6-6 on 5x5 takes minutes),
// nor waited for: loading built ones from the cache takes seconds (about
// 3.5 s a zero-aware 6-6-6-6 table), more than many a job's time limit.
// So the first look starts loading the tables that are built in the cache
// on a thread of the process's table store, and the solve goes on without
// them; each later look (Poll) finds them once they are held. From then
// on the beams rank with them and the prover restarts with them, and every
// later solve in the same process, such as a worker's next job, has them
// from its start.
#ifndef NPUZZLE_ENGINE_ANYTIME_TABLE_WATCH_H_
#define NPUZZLE_ENGINE_ANYTIME_TABLE_WATCH_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/heuristic_options.h"
#include "engine/heuristics/pattern_database.h"
#include "engine/solver.h"

namespace npuzzle {

class TableWatch {
 public:
  // The request's table settings (preset, groups, cache, zero-aware,
  // mirror); boards above 8x8 have no tables.
  explicit TableWatch(const SolveRequest& request);

  // Looks for the tables, at most once per `interval` (the first call
  // always looks, and starts their loading); true on the call that first
  // finds them held. From one thread at a time.
  bool Poll(absl::Duration interval = absl::Milliseconds(100));
  // The tables if a Poll has found them, else null. Any thread.
  std::shared_ptr<const PatternDatabase> Get() const;
  // Settings that find the held tables (for a search that makes its own
  // PatternDatabase from them).
  const HeuristicOptions& options() const { return options_; }
  // Whether the first Poll found them: they were held before the solve
  // began, and it used them throughout.
  bool held_from_start() const;
  // When a Poll found them, counted from this watch's making.
  absl::Duration found_after() const;

 private:
  const Board goal_;
  const bool fits_;
  HeuristicOptions options_;
  const absl::Time created_ = absl::Now();
  absl::Time next_look_ = absl::InfinitePast();
  bool looked_ = false;
  mutable absl::Mutex mu_;
  std::shared_ptr<const PatternDatabase> tables_ ABSL_GUARDED_BY(mu_);
  bool held_from_start_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration found_after_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ANYTIME_TABLE_WATCH_H_
