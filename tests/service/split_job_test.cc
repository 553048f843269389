// A job spread over workers, without a network: the frontier that cuts an
// IDA* search into subtrees (engine/work_split.h), subtree passes
// (SearchOptions::subtree), and the coordinator's model of the job
// (service/split_job.h), driven here with units searched in this process,
// in a random order, with lost workers, repeated and late results.
#include "service/split/split_job.h"

#include <climits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/board_parser.h"
#include "engine/instances.h"
#include "engine/move_pruning.h"
#include "engine/puzzle.h"
#include "engine/solver.h"
#include "engine/work_split.h"
#include "gtest/gtest.h"
#include "jobspec/job_spec.h"
#include "tests/util/exhaustive.h"
#include "tests/util/korf_instances.h"
#include "tests/util/solve_util.h"

namespace npuzzle {
namespace {

struct Faults {
  double lose = 0;    // a unit's worker is lost before it reports
  double repeat = 0;  // a result arrives twice
  double late = 0;    // a worker thought lost reports after its unit went out again
  // A unit is asked for part of itself back as it starts (and hands back
  // the subtrees below its root); the message that gives them is lost, and
  // only its result lists them.
  double hand_back = 0;
  double hand_back_lost = 0;
};

struct Driven {
  SplitJob::Verdict verdict = SplitJob::Verdict::kIgnored;
  v1::Result result;
  std::vector<v1::Checkpoint> checkpoints;
  std::vector<int> units_per_threshold;
};

// The quick machine, for the coordinator and the units alike: the split
// protocol is the same at any length, and the full length's build would
// take a second on each of the larger shapes. The service tests split jobs
// with the full length.
constexpr int kPruningLength = MovePruning::kQuickLength;

const MovePruning* MachineFor(const Board& b) {
  return MovePruning::For(b.rows(), b.cols(), kPruningLength, [] { return false; });
}

// Searches one unit here, as a worker would.
SolveResult SearchUnit(const Board& start, const Board& goal, const std::string& algorithm, const SplitJob::Unit& unit,
                       HandBack* hand_back = nullptr) {
  SolveRequest r;
  r.start = start;
  r.goal = goal;
  r.algorithm = algorithm;
  r.options.subtree = SearchOptions::SubtreePass{unit.prefix, unit.bound, hand_back};
  r.options.pruning_length = kPruningLength;
  absl::StatusOr<SolveResult> solved = Solve(r);
  EXPECT_TRUE(solved.ok()) << solved.status();
  return solved.ok() ? *solved : SolveResult{};
}

// Runs a split job to its end (or through `stop_after` thresholds) with
// max_workers + 1 workers that each take one unit at a time.
Driven Drive(const Board& start, const Board& goal, const std::string& algorithm, int max_workers, std::mt19937_64& rng,
             Faults faults = {}, const v1::Checkpoint& resume = {}, size_t stop_after = SIZE_MAX) {
  SplitJob job({.start = start,
                .goal = goal,
                .pruning = MachineFor(start),
                .max_workers = max_workers,
                .resume = resume,
                .started = absl::Now(),
                .algorithm = algorithm,
                .heuristic = "manhattan"});
  auto chance = [&rng](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  std::vector<std::string> idle;
  for (int i = 0; i <= max_workers; ++i) idle.push_back(absl::StrCat("w", i));
  std::vector<std::pair<SplitJob::Unit, std::string>> out;
  Driven driven;
  driven.units_per_threshold.push_back(job.JobProgress(absl::ZeroDuration()).units_total());
  for (int step = 0; step < 10000000; ++step) {
    while (!idle.empty()) {
      std::optional<SplitJob::Unit> unit = job.Lease(idle.back());
      if (!unit) break;
      EXPECT_TRUE(job.Leased(unit->id, idle.back()));
      out.emplace_back(*std::move(unit), idle.back());
      idle.pop_back();
    }
    EXPECT_LE(out.size(), static_cast<size_t>(std::max(1, max_workers)));
    if (out.empty()) {
      ADD_FAILURE() << "no unit out and no verdict";
      return driven;
    }
    const size_t pick = rng() % out.size();
    auto [unit, worker] = out[pick];
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(pick));
    idle.push_back(worker);
    if (chance(faults.lose)) {
      job.Return(unit.id);
      continue;
    }
    std::string rerun_by;
    if (chance(faults.late)) {
      // Thought lost, so handed out again (first), then its result comes.
      job.Return(unit.id);
      std::optional<SplitJob::Unit> again = job.Lease("late");
      EXPECT_TRUE(again && again->id == unit.id);
      rerun_by = "late";
    }
    std::vector<std::vector<Dir>> given;
    HandBack hand_back([&, id = unit.id](std::vector<std::vector<Dir>> prefixes) {
      if (!chance(faults.hand_back_lost)) {
        EXPECT_TRUE(job.HandedBack(id, prefixes).ok());
      }
      given.insert(given.end(), prefixes.begin(), prefixes.end());
      return true;
    });
    if (chance(faults.hand_back)) hand_back.Request();
    const SolveResult solved = SearchUnit(start, goal, algorithm, unit, &hand_back);
    // Its result lists them again.
    EXPECT_TRUE(job.HandedBack(unit.id, given).ok());
    const v1::Result result = ResultToProto(solved);
    std::string holder;
    const SplitJob::Verdict verdict = job.Finished(unit.id, worker, result, solved.next_bound, &holder);
    EXPECT_EQ(holder, rerun_by);
    if (!rerun_by.empty()) {
      EXPECT_EQ(job.Finished(unit.id, rerun_by, result, solved.next_bound, &holder), SplitJob::Verdict::kIgnored);
    }
    if (chance(faults.repeat)) {
      EXPECT_EQ(job.Finished(unit.id, worker, result, solved.next_bound, &holder), SplitJob::Verdict::kIgnored);
    }
    switch (verdict) {
      case SplitJob::Verdict::kIgnored:
        ADD_FAILURE() << "a unit's first result was ignored";
        return driven;
      case SplitJob::Verdict::kWait:
        break;
      case SplitJob::Verdict::kNextBound:
        // Whatever was still out belonged to the finished threshold.
        for (auto& [u, w] : out) idle.push_back(w);
        out.clear();
        driven.checkpoints.push_back(job.Checkpoint());
        driven.units_per_threshold.push_back(job.JobProgress(absl::ZeroDuration()).units_total());
        if (driven.checkpoints.size() >= stop_after) {
          driven.verdict = verdict;
          return driven;
        }
        break;
      case SplitJob::Verdict::kSolved:
      case SplitJob::Verdict::kExhausted:
        driven.verdict = verdict;
        driven.result = job.Result("unsolvable", absl::Now());
        return driven;
    }
  }
  ADD_FAILURE() << "the job never ended";
  return driven;
}

int IdaStarLength(const Board& start, const Board& goal, const std::string& algorithm) {
  SolveRequest r;
  r.start = start;
  r.goal = goal;
  r.algorithm = algorithm;
  absl::StatusOr<SolveResult> solved = Solve(r);
  EXPECT_TRUE(solved.ok() && solved->status == SearchStatus::kSolved);
  return solved.ok() ? static_cast<int>(solved->moves.size()) : -1;
}

// A unit's lifecycle, walked over every pair of states: out only from
// waiting, back to waiting only from out, done from either, and nothing
// leaves done.
TEST(SplitJobUnits, EveryMoveOfTheUnitLifecycleIsAllowedOrRefusedAsTheTableSays) {
  using S = SplitJob::UnitState;
  const std::set<std::pair<S, S>> allowed = {
      {S::kWaiting, S::kOut}, {S::kOut, S::kWaiting}, {S::kOut, S::kDone}, {S::kWaiting, S::kDone}};
  for (S from : {S::kWaiting, S::kOut, S::kDone}) {
    for (S to : {S::kWaiting, S::kOut, S::kDone}) {
      EXPECT_EQ(SplitJob::UnitMoveAllowed(from, to), allowed.contains({from, to}))
          << static_cast<int>(from) << " -> " << static_cast<int>(to);
    }
  }
}

// On 3x3 with random goals, checked against the exhaustive distances from
// the start: every root is a distinct board exactly `depth` moves away, the
// goal is not nearer, and the roots are in U, D, L, R order.
TEST(WorkSplit, RootsAreDistinctBoardsAtTheirDistanceAndNoGoalIsNearer) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    const Board goal = testing::RandomArrangement(3, 3, rng);
    const Board start = RandomWalk(goal, 6 + 4 * trial, rng);
    const testing::ExhaustiveDistances from_start(start);
    for (const MovePruning* pruning : {static_cast<const MovePruning*>(nullptr), MachineFor(start)}) {
      for (size_t enough : {1u, 8u, 64u, 1000u}) {
        const SplitFrontier f = GrowSplitFrontier(start, goal, pruning, enough, 40);
        EXPECT_LE(f.depth, from_start.Distance(goal));
        std::set<std::string> boards;
        for (size_t i = 0; i < f.roots.size(); ++i) {
          ASSERT_EQ(static_cast<int>(f.roots[i].size()), f.depth);
          const Board b = *ApplyMoves(start, f.roots[i]);
          EXPECT_EQ(from_start.Distance(b), f.depth) << MovesToString(f.roots[i]);
          EXPECT_TRUE(boards.insert(b.ToString()).second) << "two roots on " << b.ToString();
          if (f.depth > 0) {
            EXPECT_NE(b, goal);
          }
          if (i > 0) {
            EXPECT_LT(f.roots[i - 1], f.roots[i]);
          }
        }
      }
    }
  }
}

TEST(WorkSplit, AStartAtItsGoalIsOneRootThatSolvesInNoMoves) {
  const Board goal = *ParseBoard("1 2 3 4 5 6 7 8 0");
  const SplitFrontier f = GrowSplitFrontier(goal, goal, MachineFor(goal), 64, 40);
  EXPECT_EQ(f.depth, 0);
  ASSERT_EQ(f.roots.size(), 1u);
  EXPECT_TRUE(f.roots[0].empty());
  std::mt19937_64 rng(1);
  const Driven d = Drive(goal, goal, "idastar", 4, rng);
  EXPECT_EQ(d.verdict, SplitJob::Verdict::kSolved);
  EXPECT_EQ(d.result.length(), 0);
}

// A subtree's children cover it: at any bound its root is within (the
// only subtrees a split job cuts), the children's passes together find
// what the parent's finds, and the same least f above the bound.
TEST(WorkSplit, ASubtreesChildrenCoverIt) {
  std::mt19937_64 rng(5);
  const Board goal = *ParseBoard("1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 0");
  const Board start = RandomWalk(goal, 40, rng);
  const SplitFrontier f = GrowSplitFrontier(start, goal, MachineFor(start), 16, 40);
  int compared = 0;
  for (const std::vector<Dir>& root : f.roots) {
    const std::vector<std::vector<Dir>> children = SplitSubtree(start, goal, MachineFor(start), root);
    const int root_f = SearchUnit(start, goal, "idastar", {0, 0, root}).next_bound;
    for (int bound = root_f; bound <= root_f + 6; bound += 2) {
      const SolveResult whole = SearchUnit(start, goal, "idastar", {0, bound, root});
      if (whole.stats.expanded == 0) continue;  // its root is over the bound
      ++compared;
      bool found = false;
      int next = 0;
      for (const std::vector<Dir>& child : children) {
        const SolveResult part = SearchUnit(start, goal, "idastar", {0, bound, child});
        found |= part.status == SearchStatus::kSolved;
        if (part.next_bound > 0 && (next == 0 || part.next_bound < next)) next = part.next_bound;
      }
      EXPECT_EQ(found, whole.status == SearchStatus::kSolved);
      if (!found) {
        EXPECT_EQ(next, whole.next_bound) << MovesToString(root) << " at " << bound;
      }
    }
  }
  EXPECT_GT(compared, 10);
}

// What a subtree pass covers: the subtree below its prefix at its bound,
// less what it handed back, plus what those cover in turn.
struct Covered {
  uint64_t expanded = 0;
  int next_bound = 0;  // the least over them; 0: none
  int units = 0;
  std::vector<Dir> solution;
};

// Searches the unit below `prefix` at `bound`, asking it for part of itself
// back at its `ask_at`th check-in (progress is reported at every one), and
// then whatever it handed back, the same way `levels` deep. When
// `passed_on` is false the hand back cannot be delivered, and the unit
// keeps its work.
void Cover(const Board& start, const Board& goal, const std::vector<Dir>& prefix, int bound, int ask_at, int levels,
           bool passed_on, Covered* c) {
  std::vector<std::vector<Dir>> given;
  HandBack hand_back([&](std::vector<std::vector<Dir>> prefixes) {
    if (passed_on) given.insert(given.end(), prefixes.begin(), prefixes.end());
    return passed_on;
  });
  SolveRequest r;
  r.start = start;
  r.goal = goal;
  r.algorithm = "idastar";
  r.options.subtree = SearchOptions::SubtreePass{prefix, bound, &hand_back};
  r.options.pruning_length = kPruningLength;
  r.options.progress_interval = absl::ZeroDuration();
  int reports = 0;
  r.options.on_progress = [&](const Progress&) {
    if (++reports == ask_at && levels > 0) hand_back.Request();
  };
  absl::StatusOr<SolveResult> solved = Solve(r);
  ASSERT_TRUE(solved.ok()) << solved.status();
  c->expanded += solved->stats.expanded;
  ++c->units;
  if (solved->status == SearchStatus::kSolved) {
    c->solution = solved->moves;
    return;
  }
  ASSERT_EQ(solved->status, SearchStatus::kDepthLimit);
  if (solved->next_bound != 0 && (c->next_bound == 0 || solved->next_bound < c->next_bound)) {
    c->next_bound = solved->next_bound;
  }
  for (const std::vector<Dir>& subtree : given) {
    if (!c->solution.empty()) return;
    Cover(start, goal, subtree, bound, ask_at, levels - 1, passed_on, c);
  }
}

// Korf's instance 4 (56 moves) as one unit, asked for part of itself back
// partway through (and so is each part it hands back, three levels deep): at the
// threshold below the solution the parts expand exactly the nodes the
// whole unit does and see the same least f beyond it; at the solution's
// threshold one of them finds a solution as long. A hand back that cannot
// be delivered leaves the unit to search all of it.
TEST(SubtreePass, WhatAUnitHandsBackAndWhatItKeepsCoverItExactly) {
  const KorfInstance korf = LoadKorfInstances("korf100.txt", 4)[3];
  ASSERT_EQ(korf.id, 4);
  const Board goal = *ParseBoard("0 1 2 3 / 4 5 6 7 / 8 9 10 11 / 12 13 14 15");
  Covered whole;
  Cover(korf.start, goal, {}, korf.optimal_length - 2, 1, 0, true, &whole);
  ASSERT_EQ(whole.units, 1);
  ASSERT_GT(whole.expanded, 1000000u);
  for (int ask_at : {1, 2, 5}) {
    SCOPED_TRACE(absl::StrCat("asked at check-in ", ask_at));
    Covered parts;
    Cover(korf.start, goal, {}, korf.optimal_length - 2, ask_at, 3, true, &parts);
    EXPECT_GT(parts.units, 3);
    EXPECT_EQ(parts.expanded, whole.expanded);
    EXPECT_EQ(parts.next_bound, whole.next_bound);
    EXPECT_TRUE(parts.solution.empty());

    Covered kept;
    Cover(korf.start, goal, {}, korf.optimal_length - 2, ask_at, 3, false, &kept);
    EXPECT_EQ(kept.units, 1);
    EXPECT_EQ(kept.expanded, whole.expanded);

    Covered solved;
    Cover(korf.start, goal, {}, korf.optimal_length, ask_at, 3, true, &solved);
    ASSERT_EQ(solved.solution.size(), static_cast<size_t>(korf.optimal_length));
    EXPECT_EQ(*ApplyMoves(korf.start, solved.solution), goal);
  }
}

// Every shape from 2x2 to 8x8, random goals, scrambles of several lengths:
// the split job answers exactly IDA*'s length, never more than the
// scramble, with moves that replay, whatever order its units finish in,
// whatever faults befall them, and whatever they hand back.
TEST(SplitJob, EveryShapeAgreesWithIdaStarDespiteLostRepeatedLateAndHandedBackUnits) {
  std::mt19937_64 rng(2026);
  const Faults faults{.lose = 0.1, .repeat = 0.1, .late = 0.05, .hand_back = 0.1, .hand_back_lost = 0.3};
  for (int rows = 2; rows <= 8; ++rows) {
    for (int cols = 2; cols <= 8; ++cols) {
      const Board goal = testing::RandomArrangement(rows, cols, rng);
      for (int walk : {3, 14, 26}) {
        const Board start = RandomWalk(goal, walk, rng);
        const int expected = IdaStarLength(start, goal, "idastar");
        for (int max_workers : {1, 3, 8}) {
          SCOPED_TRACE(absl::StrCat(rows, "x", cols, " walk ", walk, " over ", max_workers, ": ", start.ToString()));
          const Driven d = Drive(start, goal, "idastar", max_workers, rng, faults);
          ASSERT_EQ(d.verdict, SplitJob::Verdict::kSolved);
          EXPECT_EQ(d.result.length(), expected);
          EXPECT_LE(d.result.length(), walk);
          EXPECT_TRUE(d.result.optimal());
          EXPECT_GE(d.result.stats().work_units(), 1);
          EXPECT_LE(d.result.stats().workers(), max_workers + 2);
          testing::ExpectReplays(start, goal, d.result.moves(), d.result.length());
        }
      }
    }
  }
}

// The most workers a client may ask for (JobSpec.max_workers 1000: a
// frontier of 32,000 roots) on the smallest, an easy and a larger board.
TEST(SplitJob, TheLargestMaxWorkersStaysBoundedAndRight) {
  std::mt19937_64 rng(1000);
  for (const auto& [rows, cols, walk] : {std::tuple{2, 2, 5}, {3, 3, 20}, {4, 4, 14}, {8, 8, 6}}) {
    const Board goal = testing::RandomArrangement(rows, cols, rng);
    const Board start = RandomWalk(goal, walk, rng);
    const SplitFrontier f =
        GrowSplitFrontier(start, goal, MachineFor(start), SplitJob::kUnitsPerWorker * kMaxWorkersPerJob, 40);
    EXPECT_LE(f.roots.size(), SplitJob::kMaxUnits);
    const Driven d = Drive(start, goal, "idastar", kMaxWorkersPerJob, rng);
    ASSERT_EQ(d.verdict, SplitJob::Verdict::kSolved) << rows << "x" << cols;
    EXPECT_EQ(d.result.length(), IdaStarLength(start, goal, "idastar"));
    testing::ExpectReplays(start, goal, d.result.moves(), d.result.length());
  }
}

// Most units end before their first progress report; the job's rate, and
// each unit's, must not read 0 for them.
TEST(SplitJob, AUnitWithoutProgressShowsItsWorkersLastRate) {
  std::mt19937_64 rng(77);
  const Board goal = testing::RandomArrangement(3, 3, rng);
  const Board start = RandomWalk(goal, 24, rng);
  SplitJob job({.start = start, .goal = goal, .max_workers = 2, .started = absl::Now(), .algorithm = "idastar"});
  const SplitJob::Unit first = *job.Lease("a");
  v1::Result result;
  result.set_status("depth_limit");
  result.mutable_stats()->set_nodes_per_second(1000);
  std::string holder;
  ASSERT_NE(job.Finished(first.id, "a", result, first.bound + 2, &holder), SplitJob::Verdict::kIgnored);
  const SplitJob::Unit next = *job.Lease("a");
  const SplitJob::Unit other = *job.Lease("b");
  EXPECT_EQ(job.UnitRate(next.id), 1000);
  EXPECT_EQ(job.UnitRate(other.id), 0);  // b has finished nothing yet
  EXPECT_EQ(job.JobProgress(absl::Seconds(1)).nodes_per_second(), 1000);
  v1::Progress progress;
  progress.set_nodes_per_second(3000);
  job.Progress(other.id, progress);
  EXPECT_EQ(job.UnitRate(other.id), 3000);
  EXPECT_EQ(job.JobProgress(absl::Seconds(1)).nodes_per_second(), 4000);
  EXPECT_EQ(job.UnitRate(first.id), 0);  // done
}

TEST(SplitJob, IterativeDeepeningSplitsToo) {
  std::mt19937_64 rng(3);
  for (const auto& [rows, cols] : {std::pair{2, 3}, {3, 3}, {2, 5}}) {
    const Board goal = testing::RandomArrangement(rows, cols, rng);
    const Board start = RandomWalk(goal, 12, rng);
    const testing::ExhaustiveDistances oracle(goal);
    const Driven d = Drive(start, goal, "iddfs", 4, rng, {.lose = 0.1});
    ASSERT_EQ(d.verdict, SplitJob::Verdict::kSolved);
    EXPECT_EQ(d.result.length(), oracle.Distance(start));
    testing::ExpectReplays(start, goal, d.result.moves(), d.result.length());
  }
}

// Korf's instance 4 (56 moves) over two workers: large units are cut into
// their children for the next threshold, the answer is the published
// optimum, and a job resumed from any of its checkpoints answers the same.
TEST(SplitJob, KorfInstanceCutsLargeUnitsAndResumesFromEachCheckpoint) {
  const KorfInstance korf = LoadKorfInstances("korf100.txt", 4)[3];
  ASSERT_EQ(korf.id, 4);
  const Board goal = *ParseBoard("0 1 2 3 / 4 5 6 7 / 8 9 10 11 / 12 13 14 15");
  std::mt19937_64 rng(4);
  const Driven d = Drive(korf.start, goal, "idastar", 2, rng,
                         {.lose = 0.02, .repeat = 0.02, .late = 0.02, .hand_back = 0.02, .hand_back_lost = 0.5});
  ASSERT_EQ(d.verdict, SplitJob::Verdict::kSolved);
  EXPECT_EQ(d.result.length(), korf.optimal_length);
  testing::ExpectReplays(korf.start, goal, d.result.moves(), d.result.length());
  EXPECT_GT(d.units_per_threshold.back(), d.units_per_threshold.front()) << "no unit was ever cut";
  ASSERT_GE(d.checkpoints.size(), 3u);
  EXPECT_EQ(d.result.stats().iterations(), static_cast<int>(d.checkpoints.size()) + 1);

  // Each finished threshold searched what one IDA* pass with the machine
  // from the start does, less the subtrees of boards the frontier reaches
  // twice and the frontier's own few hundred nodes.
  SolveRequest plain;
  plain.start = korf.start;
  plain.goal = goal;
  plain.algorithm = "idastar";
  plain.options.pruning_after_generated = 0;
  plain.options.pruning_length = kPruningLength;
  std::map<int, uint64_t> plain_expanded;  // by the threshold that followed
  plain.options.on_checkpoint = [&](const IterationCheckpoint& c) { plain_expanded[c.next_bound] = c.expanded; };
  ASSERT_TRUE(Solve(plain).ok());
  int compared = 0;
  for (const v1::Checkpoint& c : d.checkpoints) {
    const uint64_t whole = plain_expanded[c.bound()];
    if (whole < 1000) continue;
    ++compared;
    EXPECT_LE(c.expanded(), whole) << "thresholds up to " << c.bound();
    EXPECT_GE(c.expanded() + 300, whole - whole / 100) << "thresholds up to " << c.bound();
  }
  EXPECT_GE(compared, 4);

  const v1::Checkpoint& resume = d.checkpoints[d.checkpoints.size() - 2];
  const Driven resumed = Drive(korf.start, goal, "idastar", 3, rng, {}, resume);
  ASSERT_EQ(resumed.verdict, SplitJob::Verdict::kSolved);
  EXPECT_EQ(resumed.result.length(), korf.optimal_length);
  EXPECT_EQ(resumed.result.stats().resumed_from_bound(), resume.bound());
  EXPECT_GE(resumed.result.stats().expanded(), resume.expanded());
  EXPECT_EQ(resumed.checkpoints.size(), 1u);
}

}  // namespace
}  // namespace npuzzle
