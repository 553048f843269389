// Limits, cancellation, progress, seeds and request validation.
#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/board_parser.h"
#include "engine/goals.h"
#include "engine/instances.h"
#include "engine/move_pruning.h"
#include "engine/puzzle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/process_util.h"
#include "tests/util/solve_util.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;
using testing::SolveAndReplay;

// Korf's instance 1: 57 moves, minutes of work for A* with Manhattan.
const Board& Korf1() {
  static const Board b = *ParseBoard("14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3");
  return b;
}
const Board& Korf1Goal() {
  static const Board b = *GoalPreset("blank-first", 4, 4);
  return b;
}
const Board& Hard3x3() {
  static const Board b = *ParseBoard("8 6 7 2 5 4 3 0 1");
  return b;
}
const Board& Goal3x3() {
  static const Board b = *GoalPreset("standard", 3, 3);
  return b;
}

SearchOptions WithLimits(SearchLimits limits) {
  SearchOptions o;
  o.limits = limits;
  return o;
}

TEST(Limits, NodeLimitStopsAtExactlyThatManyExpansions) {
  for (const char* algorithm : {"bfs", "dfs", "astar", "greedy", "idastar", "iddfs"}) {
    const SolveResult r =
        SolveAndReplay(Hard3x3(), Goal3x3(), algorithm, "misplaced", WithLimits({.max_expanded = 500}));
    EXPECT_EQ(r.status, SearchStatus::kNodeLimit) << algorithm;
    EXPECT_EQ(r.stats.expanded, 500u) << algorithm;
    EXPECT_TRUE(r.moves.empty());
  }
  // Enough room: the same search answers.
  const SolveResult r =
      SolveAndReplay(Hard3x3(), Goal3x3(), "astar", "manhattan", WithLimits({.max_expanded = 100000}));
  EXPECT_EQ(r.status, SearchStatus::kSolved);
}

TEST(Limits, TimeLimit) {
  const SolveResult r =
      SolveAndReplay(Korf1(), Korf1Goal(), "idastar", "misplaced", WithLimits({.max_time = absl::Milliseconds(150)}));
  EXPECT_EQ(r.status, SearchStatus::kTimeLimit);
  EXPECT_GE(r.stats.elapsed, absl::Milliseconds(150));
  EXPECT_LT(r.stats.elapsed, testing::Scaled(absl::Milliseconds(400)));
  EXPECT_GT(r.stats.expanded, 0u);
}

// Peak resident memory of this process since the last reset, in bytes.
uint64_t PeakRss() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

TEST(Limits, MemoryLimitStopsAStarCleanly) {
  std::ofstream("/proc/self/clear_refs") << "5";  // reset the peak
  const uint64_t before = PeakRss();
  const uint64_t limit = 64 << 20;
  const SolveResult r =
      SolveAndReplay(Korf1(), Korf1Goal(), "astar", "manhattan", WithLimits({.max_memory_bytes = limit}));
  EXPECT_EQ(r.status, SearchStatus::kMemoryLimit);
  EXPECT_GT(r.stats.expanded, 100000u);
  EXPECT_LT(PeakRss(), before + limit + (16 << 20));
}

// A memory limit below what the full-length pruning machine's build may
// take keeps the quick machine, and one below even that keeps none; every
// one of them finds the same optimal length.
TEST(Limits, ASmallMemoryLimitKeepsTheQuickPruningMachine) {
  const auto generated = [](uint64_t memory_limit, int pruning_length) {
    SearchOptions options = WithLimits({.max_memory_bytes = memory_limit});
    options.pruning_length = pruning_length;
    options.pruning_after_generated = 0;
    const SolveResult r = SolveAndReplay(Hard3x3(), Goal3x3(), "idastar", "manhattan", options);
    EXPECT_EQ(r.status, SearchStatus::kSolved);
    EXPECT_EQ(r.moves.size(), 31u);
    return r.stats.generated;
  };
  const uint64_t undo_only = generated(0, 2);
  const uint64_t quick = generated(MovePruning::kQuickBuildBytes, MovePruning::kMaxLength);
  EXPECT_LT(quick, undo_only);
  EXPECT_EQ(quick, generated(0, MovePruning::kQuickLength));
  EXPECT_EQ(generated(MovePruning::kQuickBuildBytes - 1, MovePruning::kMaxLength), undo_only);
  EXPECT_LT(generated(0, MovePruning::kMaxLength), quick);
}

TEST(Limits, DepthLimit) {
  const Board start = *ParseBoard("8 1 3 4 0 2 7 6 5");  // 14 moves
  for (const char* algorithm : {"dfs", "iddfs", "idastar"}) {
    const SolveResult cut = SolveAndReplay(start, Goal3x3(), algorithm, "manhattan", WithLimits({.max_depth = 10}));
    EXPECT_EQ(cut.status, SearchStatus::kDepthLimit) << algorithm;
    const SolveResult room = SolveAndReplay(start, Goal3x3(), algorithm, "manhattan", WithLimits({.max_depth = 18}));
    EXPECT_EQ(room.status, SearchStatus::kSolved) << algorithm;
    EXPECT_LE(room.moves.size(), 18u) << algorithm;
  }
}

// Cancels a running solve from another thread and measures how long the
// search takes to notice.
absl::Duration CancelLatency(const std::string& algorithm, const std::string& heuristic,
                             absl::Duration after = absl::Milliseconds(300), const Board& start = Korf1(),
                             const Board& goal = Korf1Goal()) {
  CancelToken token;
  SearchOptions options;
  options.cancel = &token;
  std::atomic<bool> done = false;
  SolveResult result;
  std::thread solver([&] {
    result = SolveAndReplay(start, goal, algorithm, heuristic, options);
    done = true;
  });
  absl::SleepFor(after);
  EXPECT_FALSE(done) << algorithm << " finished before it could be cancelled";
  const absl::Time cancelled_at = absl::Now();
  token.Cancel();
  while (!done) absl::SleepFor(absl::Microseconds(200));
  const absl::Duration latency = absl::Now() - cancelled_at;
  solver.join();
  EXPECT_EQ(result.status, SearchStatus::kCancelled) << algorithm;
  return latency;
}

TEST(Cancellation, StopsWithinFiftyMilliseconds) {
  EXPECT_LT(CancelLatency("idastar", "misplaced"), testing::Scaled(absl::Milliseconds(50)));
  // IDA* with linear conflicts solves Korf's instance 1 within the 300 ms
  // the cancel waits, so it gets a 24-puzzle (Korf and Taylor's instance 2).
  const Board korf_taylor_2 = *ParseBoard("14 5 9 2 18 8 23 19 12 17 15 0 10 20 4 6 11 21 1 7 24 3 16 22 13");
  EXPECT_LT(CancelLatency("idastar", "linear-conflict", absl::Milliseconds(300), korf_taylor_2,
                          *GoalPreset("blank-first", 5, 5)),
            testing::Scaled(absl::Milliseconds(50)));
}

// IDA* builds its move-pruning machine (a fifth of a second on 8x8) only
// once the search is large, or at once when asked; a cancel that arrives
// during the build stops it too.
TEST(Cancellation, StopsWithinFiftyMillisecondsWhileThePruningMachineBuilds) {
  const Board goal = *GoalPreset("standard", 8, 8);
  std::mt19937_64 rng(5);
  const Board start = RandomWalk(goal, 400, rng);
  CancelToken token;
  SearchOptions options;
  options.cancel = &token;
  options.pruning_after_generated = 0;
  SolveResult result;
  std::atomic<bool> done = false;
  std::thread solver([&] {
    result = SolveAndReplay(start, goal, "idastar", "manhattan", options);
    done = true;
  });
  absl::SleepFor(absl::Milliseconds(20));
  const absl::Time cancelled_at = absl::Now();
  token.Cancel();
  while (!done) absl::SleepFor(absl::Microseconds(200));
  const absl::Duration latency = absl::Now() - cancelled_at;
  solver.join();
  EXPECT_EQ(result.status, SearchStatus::kCancelled);
  EXPECT_LT(latency, testing::Scaled(absl::Milliseconds(50)));
}

// Graph searches grow their stores in bounded steps (fixed record chunks,
// an index that splits into shards), so they too stop within 50 ms at any
// moment, including while millions of states are stored and a table grows.
TEST(Cancellation, GraphSearchesStopWithinFiftyMillisecondsWhileGrowing) {
  for (const auto& [algorithm, heuristic] :
       {std::pair{"astar", "manhattan"}, std::pair{"ucs", ""}, std::pair{"bfs", ""}}) {
    for (absl::Duration after : {absl::Milliseconds(300), absl::Milliseconds(1100)}) {
      EXPECT_LT(CancelLatency(algorithm, heuristic, after), testing::Scaled(absl::Milliseconds(50)))
          << algorithm << " cancelled after " << after;
    }
  }
}

TEST(Progress, ObserverSeesGrowingCountsAtTheCadence) {
  std::vector<Progress> seen;
  absl::Mutex mu;
  SearchOptions options;
  options.limits.max_time = absl::Milliseconds(600);
  options.progress_interval = absl::Milliseconds(50);
  options.on_progress = [&](const Progress& p) {
    absl::MutexLock lock(&mu);
    seen.push_back(p);
  };
  const SolveResult r = SolveAndReplay(Korf1(), Korf1Goal(), "idastar", "misplaced", options);
  EXPECT_EQ(r.status, SearchStatus::kTimeLimit);
  ASSERT_GE(seen.size(), 5u);
  EXPECT_LE(seen.size(), 13u);
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].expanded, seen[i - 1].expanded);
    EXPECT_GE(seen[i].generated, seen[i - 1].generated);
    EXPECT_GE(seen[i].bound, seen[i - 1].bound);
    EXPECT_GT(seen[i].elapsed, seen[i - 1].elapsed);
  }
  EXPECT_GT(seen.back().nodes_per_second, 0);
  EXPECT_GE(seen.back().bound, r.stats.start_h);
  EXPECT_GT(seen.back().best_h, 0);
}

// IDA* estimates each threshold's size from the growth of those before;
// checked against the sizes the thresholds turned out to have (the
// checkpoints' counts), it is within a factor of 3 once a tenth is done.
TEST(Progress, IdaStarEstimatesEachThresholdFromTheGrowthOfThoseBefore) {
  std::vector<Progress> seen;
  std::map<int, uint64_t> ended_at;  // threshold: expanded when it finished
  absl::Mutex mu;
  SearchOptions options;
  // Long enough for several thresholds, under a sanitizer too.
  options.limits.max_time = testing::Scaled(absl::Seconds(2));
  options.progress_interval = absl::Milliseconds(10);
  options.on_progress = [&](const Progress& p) {
    absl::MutexLock lock(&mu);
    seen.push_back(p);
  };
  options.on_checkpoint = [&](const IterationCheckpoint& c) {
    absl::MutexLock lock(&mu);
    ended_at[c.bound] = c.expanded;
  };
  SolveAndReplay(Korf1(), Korf1Goal(), "idastar", "misplaced", options);
  int judged = 0;
  for (const Progress& p : seen) {
    if (!p.fraction_done) continue;
    EXPECT_GE(*p.fraction_done, 0.0);
    EXPECT_LE(*p.fraction_done, 0.99);
    const auto end = ended_at.find(p.bound);
    if (end == ended_at.end() || end == ended_at.begin() || *p.fraction_done < 0.1 || *p.fraction_done >= 0.99) {
      continue;
    }
    const auto start = std::prev(end);  // the threshold before
    const double predicted = static_cast<double>(p.expanded - start->second) / *p.fraction_done;
    const double actual = static_cast<double>(end->second - start->second);
    EXPECT_GT(predicted, actual / 3) << "bound " << p.bound;
    EXPECT_LT(predicted, actual * 3) << "bound " << p.bound;
    EXPECT_TRUE(p.time_left.has_value());
    ++judged;
  }
  EXPECT_GE(judged, 3) << "too few estimates to judge";
}

// An anytime run estimates how far it is towards its time limit (or its
// gap target), and the time left is the limit's. The estimate stops at
// 0.99 until the run ends: a report in its last 10 ms is no further.
TEST(Progress, AnytimeEstimatesByItsTimeLimitAndGap) {
  std::vector<Progress> seen;
  absl::Mutex mu;
  SolveRequest request;
  request.goal = *GoalPreset("standard", 6, 6);
  std::mt19937_64 rng(3);
  request.start = RandomWalk(request.goal, 400, rng);
  request.algorithm = "anytime";
  request.options.limits.max_time = absl::Seconds(1);
  request.options.progress_interval = absl::Milliseconds(50);
  request.options.on_progress = [&](const Progress& p) {
    absl::MutexLock lock(&mu);
    seen.push_back(p);
  };
  ASSERT_TRUE(Solve(request).ok());
  ASSERT_FALSE(seen.empty());
  for (const Progress& p : seen) {
    ASSERT_TRUE(p.fraction_done.has_value());
    ASSERT_TRUE(p.time_left.has_value());
    EXPECT_LE(*p.time_left, absl::Seconds(1));
    EXPECT_GE(*p.fraction_done, std::min(0.99, absl::FDivDuration(p.elapsed, absl::Seconds(1))) - 1e-9);
  }
}

TEST(Seed, SameSeedSameAnswerAndOtherSeedsVary) {
  const Board start = *ParseBoard("8 6 7 2 5 4 3 0 1");
  std::set<std::string> answers;
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    for (const char* algorithm : {"astar", "idastar", "bfs"}) {
      SearchOptions options;
      options.seed = seed;
      const SolveResult a = SolveAndReplay(start, Goal3x3(), algorithm, "manhattan", options);
      const SolveResult b = SolveAndReplay(start, Goal3x3(), algorithm, "manhattan", options);
      EXPECT_EQ(a.moves, b.moves) << algorithm << " seed " << seed;
      EXPECT_EQ(a.stats.expanded, b.stats.expanded) << algorithm << " seed " << seed;
      EXPECT_EQ(a.moves.size(), 31u);
      answers.insert(std::string(algorithm) + MovesToString(a.moves));
    }
  }
  EXPECT_GT(answers.size(), 6u) << "seeds never changed the answer";
}

// Depth-first searches report their deepest stack as max_open. The 31-move
// board's last pass reaches depth 30 under Manhattan (a child at depth 31
// within the bound has h = 0, so it is the goal and never entered) and
// depth 31 under no heuristic (every child within the bound is entered).
TEST(Stats, DepthFirstPassesReportTheDepthTheyReached) {
  EXPECT_EQ(SolveAndReplay(Hard3x3(), Goal3x3(), "idastar", "manhattan").stats.max_open, 30u);
  EXPECT_EQ(SolveAndReplay(Hard3x3(), Goal3x3(), "iddfs", "zero").stats.max_open, 31u);
  EXPECT_EQ(SolveAndReplay(Goal3x3(), Goal3x3(), "idastar", "manhattan").stats.max_open, 0u);
  // A pass cut short by a limit still reports how deep it got.
  const SolveResult cut =
      SolveAndReplay(Hard3x3(), Goal3x3(), "idastar", "manhattan", WithLimits({.max_expanded = 5000}));
  ASSERT_EQ(cut.status, SearchStatus::kNodeLimit);
  EXPECT_GT(cut.stats.max_open, 0u);
  EXPECT_LE(cut.stats.max_open, 31u);
}

TEST(Solve, UnsolvableIsReportedWithoutSearching) {
  const Board start = *ParseBoard("1 2 3 4 5 6 8 7 0");
  const SolveResult r = SolveAndReplay(start, Goal3x3(), "astar", "manhattan");
  EXPECT_EQ(r.status, SearchStatus::kUnsolvable);
  EXPECT_EQ(r.stats.expanded, 0u);
}

TEST(Solve, StartAtTheGoal) {
  for (const char* algorithm : {"bfs", "dfs", "iddfs", "ucs", "greedy", "astar", "wastar", "idastar"}) {
    const SolveResult r = SolveAndReplay(Goal3x3(), Goal3x3(), algorithm, "manhattan");
    EXPECT_EQ(r.status, SearchStatus::kSolved) << algorithm;
    EXPECT_TRUE(r.moves.empty()) << algorithm;
  }
}

TEST(Solve, BadRequestsNameTheProblem) {
  SolveRequest r{Hard3x3(), Goal3x3()};
  r.algorithm = "dijkstra";
  EXPECT_THAT(Solve(r).status().message(),
              HasSubstr("unknown algorithm 'dijkstra' (known: auto, anytime, bfs, dfs, iddfs, ucs, greedy, astar"));
  r.algorithm = "astar";
  r.heuristic = "euclid";
  EXPECT_THAT(Solve(r).status().message(), HasSubstr("unknown heuristic 'euclid'"));
  r.heuristic = "manhattan";
  r.weight = 3;
  EXPECT_THAT(Solve(r).status().message(), HasSubstr("a weight applies only to wastar"));
  r.algorithm = "wastar";
  r.weight = -1;
  EXPECT_THAT(Solve(r).status().message(), HasSubstr("weight -1 is out of range"));
  r.weight.reset();
  r.goal = *GoalPreset("standard", 2, 4);
  EXPECT_THAT(Solve(r).status().message(), HasSubstr("start is 3x3 but goal is 2x4"));
}

TEST(Solve, LargeBoardsWork) {
  // A short scramble of an 8x8 board and a rectangular 3x7 one.
  for (auto [rows, cols] : {std::pair{8, 8}, {3, 7}, {5, 5}}) {
    const Board goal = *GoalPreset("snail", rows, cols);
    std::mt19937_64 rng(rows * cols);
    const Board far = RandomWalk(goal, 30, rng);
    for (const char* algorithm : {"astar", "idastar"}) {
      const SolveResult r = SolveAndReplay(far, goal, algorithm, "linear-conflict");
      EXPECT_EQ(r.status, SearchStatus::kSolved);
      EXPECT_LE(r.moves.size(), 30u);
    }
    // Blind search only has room for short ones on boards this big.
    const Board near = RandomWalk(goal, 10, rng);
    const SolveResult r = SolveAndReplay(near, goal, "bfs", "zero");
    EXPECT_EQ(r.status, SearchStatus::kSolved);
    EXPECT_LE(r.moves.size(), 10u);
  }
}

}  // namespace
}  // namespace npuzzle
