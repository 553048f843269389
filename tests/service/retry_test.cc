// RetryJob's rules, over every way a job can end: what may run again, what
// is refused and why, and the spec the new job gets.
#include "service/jobs/retry.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;

v1::Job Ended(v1::JobState state, const std::string& status = "", const std::string& stopped_by = "") {
  v1::Job job;
  job.set_id("old");
  job.set_state(state);
  job.mutable_spec()->mutable_start()->set_text("8 1 3 4 0 2 7 6 5");
  job.mutable_spec()->set_request_id("first");
  job.mutable_spec()->mutable_limits()->set_max_nodes(100);
  (*job.mutable_spec()->mutable_labels())["batch"] = "7";
  if (!status.empty()) job.mutable_result()->set_status(status);
  job.mutable_result()->set_stopped_by(stopped_by);
  return job;
}

TEST(Retry, FailedCancelledAndLimitStoppedJobsRunAgain) {
  for (const v1::Job& old : {Ended(v1::JOB_STATE_FAILED), Ended(v1::JOB_STATE_CANCELLED, "cancelled"),
                             Ended(v1::JOB_STATE_DONE, "node_limit"), Ended(v1::JOB_STATE_DONE, "time_limit"),
                             Ended(v1::JOB_STATE_DONE, "memory_limit"), Ended(v1::JOB_STATE_DONE, "depth_limit"),
                             Ended(v1::JOB_STATE_DONE, "solved", "time limit")}) {
    absl::StatusOr<v1::JobSpec> spec = RetrySpec(old, v1::RetryJobRequest());
    ASSERT_TRUE(spec.ok()) << old.ShortDebugString() << ": " << spec.status();
    EXPECT_EQ(spec->retry_of(), "old");
    EXPECT_EQ(spec->start().text(), old.spec().start().text());
    EXPECT_EQ(spec->labels().at("batch"), "7");
    EXPECT_EQ(spec->request_id(), "") << "the old request id names the old job";
    EXPECT_EQ(spec->limits().max_nodes(), 100u);
  }
}

TEST(Retry, TheRequestGivesTheNewJobsRequestIdAndLimits) {
  v1::RetryJobRequest request;
  request.set_request_id("again");
  request.mutable_limits()->set_max_time_ms(60000);
  absl::StatusOr<v1::JobSpec> spec = RetrySpec(Ended(v1::JOB_STATE_DONE, "node_limit"), request);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->request_id(), "again");
  EXPECT_EQ(spec->limits().max_time_ms(), 60000u);
  EXPECT_EQ(spec->limits().max_nodes(), 0u) << "the request's limits replace the old ones whole";
}

TEST(Retry, RefusesJobsThatRanToTheirAnswerHaveNotEndedOrWouldFailAgain) {
  struct Case {
    v1::Job old;
    std::string why;
  };
  v1::Job permanent = Ended(v1::JOB_STATE_FAILED);
  permanent.set_error("start: duplicate tile 5");
  permanent.set_error_permanent(true);
  v1::Job optimal = Ended(v1::JOB_STATE_DONE, "solved", "proved optimal");
  optimal.mutable_result()->set_optimal(true);
  const std::vector<Case> cases = {
      {Ended(v1::JOB_STATE_DONE, "solved"), "ended with its answer (solved)"},
      {Ended(v1::JOB_STATE_DONE, "unsolvable"), "ended with its answer (unsolvable)"},
      {optimal, "ended with its answer"},
      {Ended(v1::JOB_STATE_QUEUED), "has not finished"},
      {Ended(v1::JOB_STATE_RUNNING), "has not finished"},
      {permanent, "a reason in its spec, which a retry would meet again: start: duplicate tile 5"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<v1::JobSpec> spec = RetrySpec(c.old, v1::RetryJobRequest());
    ASSERT_FALSE(spec.ok()) << c.old.ShortDebugString();
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(spec.status().message(), HasSubstr(c.why));
  }
}

}  // namespace
}  // namespace npuzzle
