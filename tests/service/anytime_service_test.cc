// Anytime jobs through the whole service: a watcher sees each shorter
// answer and each higher bound as they come, a job whose worker is killed
// goes on from the best answer it had stored, and tables built in a
// worker's cache are used by its jobs.
#include <signal.h>

#include <random>
#include <thread>

#include "absl/time/clock.h"
#include "engine/goals.h"
#include "engine/instances.h"
#include "engine/moves.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/pdb/pdb_store.h"
#include "engine/puzzle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobspec/job_spec.h"
#include "tests/util/korf_instances.h"
#include "tests/util/process_util.h"
#include "tests/util/service_harness.h"

namespace npuzzle {
namespace {

using testing::AwaitState;
using testing::Coordinator;
using testing::GetJob;
using testing::StartWorker;
using testing::Submit;
using testing::WatchToEnd;

v1::JobSpec AnytimeSpec(int side, uint64_t seed, uint64_t time_ms) {
  std::mt19937_64 rng(seed);
  const Board start = RandomSolvableBoard(*GoalPreset("standard", side, side), rng);
  v1::JobSpec spec = testing::SpecFor(start.ToString(), "standard", "anytime", "");
  spec.set_threads(2);
  spec.mutable_limits()->set_max_time_ms(time_ms);
  return spec;
}

// `moves` take the job's start board to its goal.
void ExpectReachesGoal(const v1::Job& job, const std::string& moves) {
  const Board start = *BoardFromProto(job.start());
  const Board goal = *BoardFromProto(job.goal());
  absl::StatusOr<std::vector<Dir>> parsed = ParseMoves(moves);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Board> end = ApplyMoves(start, *parsed);
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(end->tiles(), goal.tiles());
}

TEST(AnytimeService, AWatcherSeesShorterAnswersAndHigherBoundsAsTheyCome) {
  testing::TempDir dir;
  Coordinator c(dir, 1, {"--worker-progress-ms=100"});
  c.Start();
  const v1::Job submitted = *Submit(c.stub(), AnytimeSpec(7, 1, 3000));
  const testing::Watched w = WatchToEnd(c.stub(), submitted.id(), testing::Scaled(absl::Seconds(60)));
  ASSERT_EQ(w.finals(), 1);
  const v1::Job& done = *w.final_job();
  int answers = 0, last_length = 1 << 30, last_bound = 0;
  for (const v1::JobEvent& e : w.events) {
    if (!e.has_progress() || e.progress().best_length() == 0) continue;
    const v1::Progress& p = e.progress();
    EXPECT_LE(p.best_length(), last_length);
    EXPECT_GE(p.lower_bound(), last_bound);
    EXPECT_LE(p.lower_bound(), p.best_length());
    last_length = p.best_length();
    last_bound = p.lower_bound();
    if (!p.best_moves().empty()) {
      ++answers;
      EXPECT_EQ(static_cast<int>(p.best_moves().size()), p.best_length());
      ExpectReachesGoal(done, p.best_moves());
    }
  }
  EXPECT_GE(answers, 2) << "a first answer, then at least one shorter";
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result().status(), "solved");
  EXPECT_EQ(done.result().stopped_by(), "time limit");
  EXPECT_EQ(done.result().length(), last_length);
  EXPECT_EQ(done.result().lower_bound(), last_bound);
  EXPECT_GE(done.result().lower_bound(), done.result().stats().start_h());
  EXPECT_FALSE(done.result().chosen().empty());
  testing::ExpectReplays(done);
}

TEST(AnytimeService, GetJobShowsTheCurrentAnswerWhileItRuns) {
  testing::TempDir dir;
  Coordinator c(dir, 1, {"--worker-progress-ms=100"});
  c.Start();
  const std::string id = Submit(c.stub(), AnytimeSpec(6, 2, 20000))->id();
  const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(20));
  absl::StatusOr<v1::Job> job;
  do {
    absl::SleepFor(absl::Milliseconds(50));
    job = GetJob(c.stub(), id);
    ASSERT_TRUE(job.ok()) << job.status();
  } while (job->progress().best_moves().empty() && absl::Now() < deadline);
  ASSERT_EQ(job->state(), v1::JOB_STATE_RUNNING);
  ExpectReachesGoal(*job, job->progress().best_moves());
  EXPECT_EQ(job->checkpoint().best_moves(), job->progress().best_moves());
  // Cancelled, it stops at once (and the answer in hand is not lost).
  v1::Job cancelled;
  ASSERT_TRUE(testing::Cancel(c.stub(), id, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
}

// The worker is killed once the job has stored an answer; the job's second
// attempt starts from that answer, so every answer it reports is at least
// as short (a fresh start would report its first, much longer, answer).
TEST(AnytimeService, AJobRunAgainAfterItsWorkerIsKilledKeepsItsBestAnswer) {
  testing::TempDir dir;
  Coordinator c(dir, 0, {"--worker-progress-ms=100"});
  c.Start();
  auto a = StartWorker(c, dir, "a");
  const std::string id = Submit(c.stub(), AnytimeSpec(8, 3, 6000))->id();
  testing::Watched w;
  std::thread watcher([&] { w = WatchToEnd(c.stub(), id, testing::Scaled(absl::Seconds(120))); });
  ASSERT_TRUE(AwaitState(c.stub(), id, v1::JOB_STATE_RUNNING, absl::Seconds(10)).ok());
  absl::SleepFor(absl::Milliseconds(1500));  // past the first answer and a few beams
  absl::StatusOr<v1::Job> before = GetJob(c.stub(), id);
  ASSERT_TRUE(before.ok());
  const int stored = static_cast<int>(before->checkpoint().best_moves().size());
  ASSERT_GT(stored, 0);
  a->Signal(SIGKILL);
  auto b = StartWorker(c, dir, "b");
  watcher.join();

  ASSERT_EQ(w.finals(), 1);
  const v1::Job& done = *w.final_job();
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.worker_id(), "b");
  EXPECT_EQ(done.attempt(), 2);
  EXPECT_LE(done.result().length(), stored);
  bool second_attempt = false;
  int reported = 0;
  for (const v1::JobEvent& e : w.events) {
    if (e.has_state()) second_attempt = e.state().attempt() == 2;
    if (second_attempt && e.has_progress() && e.progress().best_length() > 0) {
      ++reported;
      EXPECT_LE(e.progress().best_length(), stored);
    }
  }
  EXPECT_GT(reported, 0);
  testing::ExpectReplays(done);
}

// The promise of JobSpec.pdb_groups for anytime: the worker's first job
// starts loading the tables built in its cache, and its next job ranks and
// proves with them. Korf and Taylor's first 5x5 board, 3-tile groups (their
// tables build in milliseconds).
TEST(AnytimeService, AWorkerUsesTablesBuiltInItsCache) {
  testing::TempDir dir;
  Coordinator c(dir, 1, {"--worker-progress-ms=100"});
  const Board goal = *GoalPreset("blank-first", 5, 5);
  const std::string groups = "1,2,3/4,5,6/7,8,9/10,11,12/13,14,15/16,17,18/19,20,21/22,23,24";
  {
    PdbStore builder(c.data_dir() + "/pdb");
    const absl::StatusOr<PatternPartitions> partitions = ResolvePatternPartitions(goal, "", groups);
    ASSERT_TRUE(partitions.ok()) << partitions.status();
    for (const std::vector<int>& tiles : partitions->front()) {
      ASSERT_TRUE(builder.Table({goal, tiles, false}, {}).ok());
    }
  }
  c.Start();
  const std::vector<KorfInstance> korf = LoadKorfInstances("korf-taylor-24.txt", 5);
  v1::JobSpec spec = testing::SpecFor(korf[0].start.ToString(), "blank-first", "anytime", "");
  spec.set_pdb_groups(groups);
  spec.set_threads(2);
  spec.mutable_limits()->set_max_time_ms(1000);
  std::string chosen;
  for (int job = 0; job < 2; ++job) {
    const std::string id = Submit(c.stub(), spec)->id();
    absl::StatusOr<v1::Job> done = AwaitState(c.stub(), id, v1::JOB_STATE_DONE, testing::Scaled(absl::Seconds(30)));
    ASSERT_TRUE(done.ok()) << done.status();
    testing::ExpectReplays(*done);
    EXPECT_GE(done->result().length(), korf[0].optimal_length);
    EXPECT_LE(done->result().lower_bound(), korf[0].optimal_length);
    chosen = done->result().chosen();
    if (job == 0) absl::SleepFor(absl::Milliseconds(500));  // the load takes milliseconds
  }
  EXPECT_THAT(chosen, ::testing::HasSubstr("over the pattern tables built for this goal"));
  EXPECT_THAT(chosen, ::testing::HasSubstr("idastar with pdb"));
}

}  // namespace
}  // namespace npuzzle
