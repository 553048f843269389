// Every algorithm that promises shortest answers returns exactly the
// exhaustive-BFS distance on random small boards with random goals; the
// others return answers that replay and are no shorter than optimal.
#include <map>
#include <random>

#include "engine/board_parser.h"
#include "engine/goals.h"
#include "engine/instances.h"
#include "engine/registry.h"
#include "engine/solver.h"
#include "gtest/gtest.h"
#include "tests/util/exhaustive.h"
#include "tests/util/solve_util.h"

namespace npuzzle {
namespace {

using testing::ExhaustiveDistances;
using testing::SolveAndReplay;

struct Shape {
  int rows, cols, goals, boards_per_goal;
  int blind_boards_per_goal;  // how many of them the uninformed searches get

  friend void PrintTo(const Shape& s, std::ostream* os) { *os << s.rows << "x" << s.cols; }
};

class OptimalityTest : public ::testing::TestWithParam<Shape> {};

TEST_P(OptimalityTest, OptimalAlgorithmsMatchBfsDistances) {
  const Shape shape = GetParam();
  std::mt19937_64 rng(shape.rows * 100 + shape.cols);
  int checked = 0;
  for (int g = 0; g < shape.goals; ++g) {
    const Board goal = testing::RandomArrangement(shape.rows, shape.cols, rng);
    const ExhaustiveDistances oracle(goal);
    for (int i = 0; i < shape.boards_per_goal; ++i) {
      const Board start = RandomSolvableBoard(goal, rng);
      const int distance = oracle.Distance(start);
      ASSERT_GE(distance, 0);
      for (const AlgorithmInfo& a : Algorithms()) {
        if (!a.uses_heuristic && i >= shape.blind_boards_per_goal) continue;
        for (const HeuristicInfo& h : Heuristics()) {
          // Informed searches over h = 0 only repeat the uninformed ones.
          if (a.uses_heuristic == (h.name == "zero")) continue;
          // Iterative deepening re-walks the tree once per depth; keep it to
          // the shallower boards.
          if (a.name == "iddfs" && distance > 20) continue;
          const SolveResult r = SolveAndReplay(start, goal, std::string(a.name), std::string(h.name));
          ASSERT_EQ(r.status, SearchStatus::kSolved) << a.name << "/" << h.name;
          if (r.optimal) {
            EXPECT_EQ(static_cast<int>(r.moves.size()), distance)
                << a.name << "/" << h.name << " " << start.ToString() << " -> " << goal.ToString();
            ++checked;
          } else {
            EXPECT_GE(static_cast<int>(r.moves.size()), distance) << a.name;
            EXPECT_EQ(static_cast<int>(r.moves.size()) % 2, distance % 2) << a.name;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, shape.goals * shape.boards_per_goal * 8);
}

INSTANTIATE_TEST_SUITE_P(SmallBoards, OptimalityTest,
                         ::testing::Values(Shape{3, 3, 8, 25, 25}, Shape{2, 4, 10, 20, 20}, Shape{2, 5, 3, 12, 2},
                                           Shape{4, 2, 5, 20, 20}),
                         [](const auto& info) {
                           return std::to_string(info.param.rows) + "x" + std::to_string(info.param.cols);
                         });

TEST(Optimality, OptimalFlagFollowsAlgorithmAndWeight) {
  const Board goal = *Board::Create(3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 0});
  const Board start = *Board::Create(3, 3, {8, 1, 3, 4, 0, 2, 7, 6, 5});
  for (auto [algorithm, optimal] : {std::pair{"bfs", true},
                                    {"iddfs", true},
                                    {"ucs", true},
                                    {"astar", true},
                                    {"idastar", true},
                                    {"dfs", false},
                                    {"greedy", false},
                                    {"wastar", false}}) {
    EXPECT_EQ(SolveAndReplay(start, goal, algorithm, "manhattan").optimal, optimal) << algorithm;
  }
  SolveRequest request{start, goal, "wastar", "manhattan", 1.0};
  EXPECT_TRUE(Solve(request)->optimal);
  EXPECT_EQ(Solve(request)->moves.size(), 14u);
}

// A checkpoint says no solution is shorter than its bound: IDA* resumed from
// any checkpoint a run reported finds the optimal length again. On 3x4 the
// truth is exhaustive search; on 4x4, with two threads (so the later passes
// are split), it is the uninterrupted run.
void CheckResumes(const Board& start, const Board& goal, int threads, int optimal, int* resumed) {
  SearchOptions options;
  options.threads = threads;
  // The pruning machine from the first pass, as a resumed run has it, so
  // that both runs search the same passes.
  options.pruning_after_generated = 0;
  std::vector<IterationCheckpoint> checkpoints;
  options.on_checkpoint = [&](const IterationCheckpoint& c) { checkpoints.push_back(c); };
  const SolveResult whole = SolveAndReplay(start, goal, "idastar", "manhattan", options);
  ASSERT_EQ(static_cast<int>(whole.moves.size()), optimal);
  ASSERT_EQ(static_cast<int>(checkpoints.size()), whole.stats.iterations - 1);
  for (size_t k = 0; k < checkpoints.size(); ++k) {
    const IterationCheckpoint& c = checkpoints[k];
    EXPECT_LE(c.next_bound, optimal);
    EXPECT_EQ(c.iterations, static_cast<int>(k) + 1);
    EXPECT_LT(c.bound, c.next_bound);
    if (k == 0) {
      EXPECT_EQ(c.bound, whole.stats.start_h);
    }
    if (k > 0) {
      EXPECT_EQ(c.bound, checkpoints[k - 1].next_bound);
      EXPECT_GT(c.next_bound, checkpoints[k - 1].next_bound);
      EXPECT_GE(c.expanded, checkpoints[k - 1].expanded);
    }
    options.on_checkpoint = nullptr;
    options.resume_bound = c.next_bound;
    const SolveResult rest = SolveAndReplay(start, goal, "idastar", "manhattan", options);
    EXPECT_EQ(static_cast<int>(rest.moves.size()), optimal) << "resumed at " << c.next_bound;
    EXPECT_EQ(rest.stats.iterations, whole.stats.iterations - static_cast<int>(k) - 1);
    // On one thread the passes are the same ones, so the work adds up
    // exactly; split passes stop wherever a thread first finds the goal.
    if (threads == 1) {
      EXPECT_EQ(c.expanded + rest.stats.expanded, whole.stats.expanded);
    }
    ++*resumed;
  }
}

TEST(IdaStarCheckpoints, ResumingFromAnyCheckpointStaysOptimal) {
  std::mt19937_64 rng(7);
  int resumed = 0;
  const Board goal = testing::RandomArrangement(3, 3, rng);
  const ExhaustiveDistances oracle(goal);
  for (int i = 0; i < 12; ++i) {
    const Board start = RandomSolvableBoard(goal, rng);
    CheckResumes(start, goal, 1, oracle.Distance(start), &resumed);
  }
  EXPECT_GT(resumed, 30);
  // 4x4 boards whose later passes generate more than the 200,000 states
  // after which IDA* splits them over threads (about a million in all).
  const Board goal4 = *GoalPreset("standard", 4, 4);
  for (const char* text :
       {"13 5 1 8 / 2 7 3 11 / 0 4 9 6 / 14 10 12 15", "8 1 2 4 / 6 15 10 0 / 5 14 3 7 / 9 12 13 11"}) {
    const Board start = *ParseBoard(text);
    const SolveResult reference = SolveAndReplay(start, goal4, "idastar", "linear-conflict");
    CheckResumes(start, goal4, 2, static_cast<int>(reference.moves.size()), &resumed);
  }
}

// A 4x4 board whose later IDA* passes with Manhattan distance are large
// enough to be split at a frontier (about a million states in all).
SolveResult SolveLargeBoard(const SearchOptions& options) {
  return SolveAndReplay(*ParseBoard("13 5 1 8 / 2 7 3 11 / 0 4 9 6 / 14 10 12 15"), *GoalPreset("standard", 4, 4),
                        "idastar", "manhattan", options);
}

// Resumed at a high bound, a search is large though it has generated
// nothing yet in this run: its first pass already skips the move sequences
// the pruning machine finds redundant (it once waited for this run's own
// count to pass pruning_after_generated, and ran the largest pass unpruned
// and on one thread).
//
// The node counts are compared on one thread: on two, the last pass's count
// depends on when one thread finds the goal while the other searches on,
// and under a sanitizer, beside another test, the pruned run once counted
// 94% of the unpruned one's nodes (on one thread it is under 80%).
TEST(IdaStarCheckpoints, AResumedSearchPrunesFromItsFirstPass) {
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    SearchOptions options;
    options.threads = threads;
    std::vector<IterationCheckpoint> checkpoints;
    options.on_checkpoint = [&](const IterationCheckpoint& c) { checkpoints.push_back(c); };
    const SolveResult whole = SolveLargeBoard(options);
    ASSERT_FALSE(checkpoints.empty());
    options.on_checkpoint = nullptr;
    options.resume_bound = checkpoints.back().next_bound;
    ASSERT_GT(options.pruning_after_generated, 0u);
    const SolveResult pruned = SolveLargeBoard(options);
    options.pruning_length = 2;
    const SolveResult unpruned = SolveLargeBoard(options);
    EXPECT_EQ(pruned.moves.size(), whole.moves.size());
    EXPECT_EQ(unpruned.moves.size(), whole.moves.size());
    EXPECT_EQ(pruned.stats.iterations, 1);
    if (threads == 1) {
      EXPECT_LT(pruned.stats.generated * 5, unpruned.stats.generated * 4);
    }
  }
}

// A run interrupted inside an iteration resumes it without the subtrees it
// had finished: on one thread the resumed run searches exactly the rest
// (its nodes and the skipped ones add up to a resume that skips nothing),
// and the answer stays optimal on one thread or two.
TEST(IdaStarCheckpoints, AResumedIterationSkipsTheSubtreesFinishedBefore) {
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    SearchOptions options;
    options.threads = threads;
    options.pruning_after_generated = 0;  // the same machine, so the same frontier, in every run
    std::vector<SubtreeCheckpoint> subtrees;
    options.on_subtree_checkpoint = [&](const SubtreeCheckpoint& s) { subtrees.push_back(s); };
    const SolveResult whole = SolveLargeBoard(options);
    const int optimal = static_cast<int>(whole.moves.size());
    // The last iteration's subtrees finished before the goal was found:
    // what a run killed just before it would have recorded.
    std::vector<SubtreeCheckpoint> finished;
    uint64_t skipped = 0;
    for (const SubtreeCheckpoint& s : subtrees) {
      if (s.bound != optimal) continue;
      finished.push_back(s);
      skipped += s.generated;
    }
    ASSERT_GT(finished.size(), 10u);
    options.on_subtree_checkpoint = [](const SubtreeCheckpoint&) {};
    options.resume_bound = optimal;
    const SolveResult afresh = SolveLargeBoard(options);
    options.resume_subtrees = finished;
    const SolveResult resumed = SolveLargeBoard(options);
    EXPECT_EQ(static_cast<int>(afresh.moves.size()), optimal);
    EXPECT_EQ(static_cast<int>(resumed.moves.size()), optimal);
    EXPECT_LT(resumed.stats.generated, afresh.stats.generated);
    if (threads == 1) {
      EXPECT_EQ(resumed.stats.generated + skipped, afresh.stats.generated);
    }
    EXPECT_EQ(afresh.stats.resumed_subtrees, 0);
    EXPECT_EQ(resumed.stats.resumed_subtrees, static_cast<int>(finished.size()));
    // Records of another frontier are ignored: the search is done afresh.
    for (SubtreeCheckpoint& s : options.resume_subtrees) ++s.frontier;
    const SolveResult other = SolveLargeBoard(options);
    EXPECT_EQ(static_cast<int>(other.moves.size()), optimal);
    if (threads == 1) {
      EXPECT_EQ(other.stats.generated, afresh.stats.generated);
    }
    EXPECT_EQ(other.stats.resumed_subtrees, 0);
  }
}

// A subtree's counts are its own nodes, however often the thread has
// handed its counts to the monitor meanwhile (they once wrapped below zero
// when it had). On one thread an iteration is its subtrees, once the
// frontier it reuses is grown, so their counts add up to the iteration's.
TEST(IdaStarCheckpoints, ASubtreesCountIsItsOwnNodes) {
  SearchOptions options;
  options.pruning_length = 2;  // a larger search: the monitor checks in within subtrees
  std::map<int, uint64_t> per_bound, expanded_per_bound;
  options.on_subtree_checkpoint = [&](const SubtreeCheckpoint& s) {
    per_bound[s.bound] += s.generated;
    expanded_per_bound[s.bound] += s.expanded;
  };
  std::vector<IterationCheckpoint> iterations;
  options.on_checkpoint = [&](const IterationCheckpoint& c) { iterations.push_back(c); };
  SolveLargeBoard(options);
  // Resumed, the search grows its frontier in its first pass.
  options.resume_bound = iterations.at(0).next_bound;
  iterations.clear();
  per_bound.clear();
  expanded_per_bound.clear();
  SolveLargeBoard(options);
  int compared = 0;
  for (size_t k = 1; k < iterations.size(); ++k) {
    EXPECT_EQ(per_bound[iterations[k].bound], iterations[k].generated - iterations[k - 1].generated);
    EXPECT_EQ(expanded_per_bound[iterations[k].bound], iterations[k].expanded - iterations[k - 1].expanded);
    EXPECT_LT(per_bound[iterations[k].bound], iterations[k].generated);
    ++compared;
  }
  EXPECT_GE(compared, 1);
}

// Resumed at an iteration whose every subtree an earlier run finished, the
// search searches none of them and moves on to the bound their records
// give, which is the one the finished iteration moved on to.
TEST(IdaStarCheckpoints, AnIterationFinishedSubtreeBySubtreeMovesOnToTheSameBound) {
  SearchOptions options;
  options.pruning_after_generated = 0;
  std::vector<IterationCheckpoint> iterations;
  options.on_checkpoint = [&](const IterationCheckpoint& c) { iterations.push_back(c); };
  SolveLargeBoard(options);
  ASSERT_GE(iterations.size(), 3u);
  // Resumed, a search splits its passes from the first, so every
  // iteration of this one is checkpointed subtree by subtree.
  options.resume_bound = iterations[0].next_bound;
  iterations.clear();
  std::vector<SubtreeCheckpoint> subtrees;
  options.on_subtree_checkpoint = [&](const SubtreeCheckpoint& s) { subtrees.push_back(s); };
  const SolveResult whole = SolveLargeBoard(options);
  ASSERT_GE(iterations.size(), 2u);
  const IterationCheckpoint& last_finished = iterations.back();
  std::vector<SubtreeCheckpoint> all_of_it;
  for (const SubtreeCheckpoint& s : subtrees) {
    if (s.bound == last_finished.bound) all_of_it.push_back(s);
  }
  ASSERT_FALSE(all_of_it.empty());
  options.on_checkpoint = nullptr;
  options.resume_bound = last_finished.bound;
  options.resume_subtrees = all_of_it;
  std::vector<int> bounds;
  options.on_checkpoint = [&](const IterationCheckpoint& c) { bounds.push_back(c.next_bound); };
  const SolveResult resumed = SolveLargeBoard(options);
  EXPECT_EQ(resumed.moves.size(), whole.moves.size());
  ASSERT_FALSE(bounds.empty());
  EXPECT_EQ(bounds.front(), last_finished.next_bound);
  // The skipped iteration cost only the frontier's growth.
  options.resume_subtrees.clear();
  options.resume_bound = last_finished.next_bound;
  options.on_checkpoint = nullptr;
  const SolveResult from_next = SolveLargeBoard(options);
  EXPECT_LT(resumed.stats.generated, from_next.stats.generated + 10000);
}

// A stop that comes before a resumed pass searches anything (here a
// cancel, seen while the pruning machine for a new shape builds, which
// then leaves the search unpruned) ends the search without claiming the
// iteration: the subtrees it skipped gave it a next bound, and it once
// reported that iteration finished at it, so the job resumed past its
// optimal length (a 15-puzzle job of 57 moves answered 59 in the
// multi-host test, drained just after it was resumed).
TEST(IdaStarCheckpoints, AStopBeforeAResumedPassSearchesAnythingClaimsNoIteration) {
  CancelToken cancel_after_first_pass;
  // A shape no other test here builds a pruning machine for, so the
  // search builds it, and sees the cancel, before its first pass.
  std::mt19937_64 rng(11);
  const Board goal = *GoalPreset("standard", 3, 5);
  const Board start = RandomSolvableBoard(goal, rng);
  // Resumed above the start's estimate, a run splits its first pass into
  // subtrees; a run killed in it had finished all but the last. Unpruned:
  // the frontier the cancelled run grows. Only that pass is needed.
  SearchOptions options;
  options.pruning_length = 2;
  options.limits.max_expanded = 1;
  const int bound = testing::SolveAndReplay(start, goal, "idastar", "manhattan", options).stats.start_h + 2;
  options.limits.max_expanded = 0;
  options.resume_bound = bound;
  std::vector<SubtreeCheckpoint> subtrees;
  std::vector<IterationCheckpoint> iterations;
  options.on_subtree_checkpoint = [&](const SubtreeCheckpoint& s) { subtrees.push_back(s); };
  options.on_checkpoint = [&](const IterationCheckpoint& c) {
    iterations.push_back(c);
    if (c.bound == bound) cancel_after_first_pass.Cancel();
  };
  options.cancel = &cancel_after_first_pass;
  testing::SolveAndReplay(start, goal, "idastar", "manhattan", options);
  ASSERT_FALSE(iterations.empty());
  ASSERT_EQ(iterations[0].bound, bound);
  std::erase_if(subtrees, [&](const SubtreeCheckpoint& s) { return s.bound != bound; });
  ASSERT_GE(subtrees.size(), 2u);
  subtrees.pop_back();

  CancelToken cancel;
  cancel.Cancel();
  options.cancel = &cancel;
  options.pruning_length = SearchOptions().pruning_length;
  options.resume_subtrees = subtrees;
  options.on_subtree_checkpoint = [](const SubtreeCheckpoint&) {};
  iterations.clear();
  const SolveResult stopped = testing::SolveAndReplay(start, goal, "idastar", "manhattan", options);
  EXPECT_EQ(stopped.status, SearchStatus::kCancelled);
  EXPECT_TRUE(iterations.empty()) << "claimed threshold " << iterations.front().bound << " finished, next "
                                  << iterations.front().next_bound;
}

}  // namespace
}  // namespace npuzzle
