// A job's IDA* checkpoint as the worker builds it, the coordinator keeps it
// and a run resumes from it (jobspec/checkpoint.h): subtrees marked mid-
// threshold survive the trip, and a run resumed from them skips them and
// still answers the optimal length.
#include "jobspec/checkpoint.h"

#include <climits>

#include "engine/solver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobspec/work_unit.h"
#include "tests/util/service_harness.h"

namespace npuzzle {
namespace {

SubtreeCheckpoint Subtree(int bound, uint64_t frontier, int index, int next_bound, uint64_t generated = 10) {
  return {bound, frontier, index, next_bound, generated / 2, generated};
}

TEST(Checkpoint, MarkedSubtreesComeBackWithTheLeastNextBound) {
  v1::Checkpoint c;
  c.set_bound(50);
  c.set_generated(1000);
  AddSubtree(Subtree(50, 0xf00d, 9, 54), &c);
  AddSubtree(Subtree(50, 0xf00d, 0, 52), &c);
  AddSubtree(Subtree(50, 0xf00d, 4096, INT_MAX), &c);
  EXPECT_EQ(c.bound(), 50);
  EXPECT_EQ(c.generated(), 1030u);
  EXPECT_EQ(c.expanded(), 15u);
  EXPECT_EQ(c.subtrees_done().size(), 513u);
  std::vector<int> indexes;
  for (const SubtreeCheckpoint& s : SubtreesDone(c)) {
    indexes.push_back(s.index);
    EXPECT_EQ(s.bound, 50);
    EXPECT_EQ(s.frontier, 0xf00du);
    EXPECT_EQ(s.next_bound, 52);
  }
  EXPECT_THAT(indexes, ::testing::ElementsAre(0, 9, 4096));
}

TEST(Checkpoint, SubtreesOfAnotherThresholdOrSplitAreDroppedButTheirWorkCounts) {
  v1::Checkpoint c;
  AddSubtree(Subtree(50, 1, 3, 52), &c);  // a fresh job's first threshold
  EXPECT_EQ(c.bound(), 50);
  AddSubtree(Subtree(50, 2, 5, 54), &c);
  ASSERT_EQ(SubtreesDone(c).size(), 1u);
  EXPECT_EQ(SubtreesDone(c)[0].index, 5);
  EXPECT_EQ(SubtreesDone(c)[0].next_bound, 54);
  EXPECT_EQ(c.generated(), 20u);
  c = AfterIteration(c, {50, 52, 7, 40, 1});
  EXPECT_EQ(c.bound(), 52);
  EXPECT_TRUE(SubtreesDone(c).empty());
  EXPECT_EQ(c.generated(), 60u);
  EXPECT_EQ(c.iterations(), 1);
}

TEST(Checkpoint, ASubtreeBeyondTheBitmapsLimitIsNotRecorded) {
  v1::Checkpoint c;
  AddSubtree(Subtree(50, 1, static_cast<int>(kMaxCheckpointSubtrees), 52), &c);
  AddSubtree(Subtree(50, 1, -1, 52), &c);
  EXPECT_TRUE(c.subtrees_done().empty());
  EXPECT_EQ(c.generated(), 0u);
}

TEST(Checkpoint, TheCoordinatorKeepsWhicheverGotFurther) {
  v1::Checkpoint stored;
  stored.set_bound(50);
  stored.set_generated(100);
  stored.set_best_moves("UL");
  v1::Checkpoint incoming = stored;
  incoming.clear_best_moves();
  AddSubtree(Subtree(50, 1, 3, 52), &incoming);
  ASSERT_TRUE(MergeThreshold(incoming, &stored));
  EXPECT_EQ(SubtreesDone(stored).size(), 1u);
  EXPECT_EQ(stored.best_moves(), "UL");             // MergeBest's to change
  EXPECT_FALSE(MergeThreshold(incoming, &stored));  // nothing new
  v1::Checkpoint behind;
  behind.set_bound(48);
  behind.set_generated(1000);
  EXPECT_FALSE(MergeThreshold(behind, &stored));
  v1::Checkpoint ahead;
  ahead.set_bound(52);
  ahead.set_generated(110);
  ASSERT_TRUE(MergeThreshold(ahead, &stored));
  EXPECT_EQ(stored.bound(), 52);
  EXPECT_TRUE(stored.subtrees_done().empty());
  v1::Checkpoint oversized = ahead;
  oversized.set_generated(200);
  oversized.set_subtrees_done(std::string(kMaxCheckpointSubtrees / 8 + 1, '\xff'));
  EXPECT_FALSE(MergeThreshold(oversized, &stored));
  EXPECT_TRUE(SubtreesDone(oversized).empty());
}

// The worker's part, played here: a run's checkpoints folded as the worker
// folds them; then a run resumed from the last one, as the next attempt's
// assignment would carry it, skips the subtrees marked and is optimal.
TEST(Checkpoint, ARunResumedFromMarkedSubtreesSkipsThemAndStaysOptimal) {
  v1::Assignment assignment;
  *assignment.mutable_spec() =
      testing::SpecFor("13 5 1 8 2 7 3 11 0 4 9 6 14 10 12 15", "standard", "idastar", "manhattan");
  assignment.mutable_spec()->set_threads(1);
  absl::StatusOr<SolveRequest> first = RequestFromAssignment(assignment);
  ASSERT_TRUE(first.ok()) << first.status();
  first->options.pruning_after_generated = 0;  // the same split in both runs
  v1::Checkpoint latest;
  uint64_t marked_generated = 0;  // by the threshold under way's marked subtrees
  first->options.on_checkpoint = [&](const IterationCheckpoint& c) {
    latest = AfterIteration({}, c);
    marked_generated = 0;
  };
  first->options.on_subtree_checkpoint = [&](const SubtreeCheckpoint& s) {
    marked_generated += s.generated;
    AddSubtree(s, &latest);
  };
  absl::StatusOr<SolveResult> whole = Solve(*first);
  ASSERT_TRUE(whole.ok()) << whole.status();
  const int optimal = static_cast<int>(whole->moves.size());
  // Killed just before the answer: the last threshold's subtrees before it.
  ASSERT_EQ(latest.bound(), optimal);
  const size_t marked = SubtreesDone(latest).size();
  ASSERT_GT(marked, 10u);

  *assignment.mutable_checkpoint() = latest;
  absl::StatusOr<SolveRequest> second = RequestFromAssignment(assignment);
  ASSERT_TRUE(second.ok()) << second.status();
  second->options.pruning_after_generated = 0;
  EXPECT_EQ(second->options.resume_bound, optimal);
  absl::StatusOr<SolveResult> resumed = Solve(*second);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(static_cast<int>(resumed->moves.size()), optimal);
  EXPECT_TRUE(resumed->optimal);
  EXPECT_EQ(resumed->stats.resumed_subtrees, static_cast<int>(marked));
  // Their work is not done again: the two runs together did the whole
  // run's, but for a frontier grown twice (under 10,000 states).
  EXPECT_LT(resumed->stats.generated + latest.generated(), whole->stats.generated + marked_generated / 2);
  EXPECT_GT(marked_generated, 50000u);
}

}  // namespace
}  // namespace npuzzle
