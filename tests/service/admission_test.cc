// What a submitted spec must pass, on its own: bounds first, then limits
// and the engine's reading; an unsolvable board is decided at once; room
// in the queue and the tenant's quota are asked last.
#include "service/jobs/admission.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;

v1::JobSpec Spec(const std::string& board) {
  v1::JobSpec spec;
  spec.mutable_start()->set_text(board);
  return spec;
}

TEST(Admission, ANewJobHasAnIdTheDefaultLimitsAndTheBoardsAsRead) {
  LimitPolicy limits;
  limits.defaults.set_max_time_ms(5000);
  const absl::StatusOr<v1::Job> job = NewJob(Spec("8 1 3 4 0 2 7 6 5"), "team", limits);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_THAT(job->id(), ::testing::StartsWith("job-"));
  EXPECT_EQ(job->tenant(), "team");
  EXPECT_EQ(job->state(), v1::JOB_STATE_UNSPECIFIED) << "the lifecycle sets the state";
  EXPECT_EQ(job->spec().limits().max_time_ms(), 5000u);
  EXPECT_EQ(job->start().tiles_size(), 9);
  EXPECT_EQ(job->goal().tiles(8), 0);
  EXPECT_FALSE(job->has_result());
  EXPECT_NE(NewJob(Spec("8 1 3 4 0 2 7 6 5"), "team", limits)->id(), job->id());
}

TEST(Admission, AnUnsolvableBoardIsDecidedWithoutASearch) {
  const absl::StatusOr<v1::Job> job = NewJob(Spec("1 2 3 4 5 6 8 7 0"), "", {});
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->result().status(), "unsolvable");
}

TEST(Admission, BoundsComeBeforeTheBoardAndLimitsBeforeTheEngine) {
  v1::JobSpec both = Spec("not a board");
  both.set_priority(2000000000);
  EXPECT_THAT(NewJob(both, "", {}).status().message(), HasSubstr("priority"));
  LimitPolicy ceiling;
  ceiling.ceilings.set_max_memory_mb(10);
  v1::JobSpec big = Spec("not a board");
  big.mutable_limits()->set_max_memory_mb(11);
  EXPECT_THAT(NewJob(big, "", ceiling).status().message(), HasSubstr("max_memory_mb"));
  EXPECT_THAT(NewJob(Spec("1 2 3 4 5 5 7 8 0"), "", {}).status().message(), HasSubstr("start: duplicate tile 5"));
}

TEST(Admission, RefusedWhileDrainingWhenFullOrOverTheTenantsQuota) {
  JobQueue queue;
  v1::Job waiting;
  waiting.set_id("job-0");
  waiting.set_tenant("t");
  queue.Push(waiting, 1);
  v1::Job job = *NewJob(Spec("8 1 3 4 0 2 7 6 5"), "t", {});
  EXPECT_TRUE(Refusal(job, true, queue, 2, {}).ok());
  EXPECT_TRUE(absl::IsUnavailable(Refusal(job, false, queue, 2, {})));
  EXPECT_THAT(Refusal(job, true, queue, 1, {}).message(), HasSubstr("the queue is full"));
  EXPECT_THAT(Refusal(job, true, queue, 2, {.max_queued = 1}).message(), HasSubstr("max_queued"));
  v1::Job decided = *NewJob(Spec("1 2 3 4 5 6 8 7 0"), "t", {});
  EXPECT_TRUE(Refusal(decided, true, queue, 1, {.max_queued = 1}).ok()) << "a decided job takes no room";
}

}  // namespace
}  // namespace npuzzle
