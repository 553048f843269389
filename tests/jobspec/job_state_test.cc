// The job lifecycle's table, walked over every state and every change: the
// allowed ones lead where the .proto says, every other is refused.
#include "jobspec/job_state.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

using v1::JobState;

constexpr JobState kStates[] = {v1::JOB_STATE_UNSPECIFIED, v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING,
                                v1::JOB_STATE_DONE,        v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED};
constexpr JobChange kChanges[] = {JobChange::kAdmit,  JobChange::kDecide, JobChange::kStart, JobChange::kRequeue,
                                  JobChange::kFinish, JobChange::kFail,   JobChange::kCancel};

// Written out here from solver.proto's description of JobState, not read
// from the table under test.
const std::map<std::pair<JobState, JobChange>, JobState> kExpected = {
    {{v1::JOB_STATE_UNSPECIFIED, JobChange::kAdmit}, v1::JOB_STATE_QUEUED},
    {{v1::JOB_STATE_UNSPECIFIED, JobChange::kDecide}, v1::JOB_STATE_DONE},
    {{v1::JOB_STATE_QUEUED, JobChange::kStart}, v1::JOB_STATE_RUNNING},
    {{v1::JOB_STATE_QUEUED, JobChange::kFinish}, v1::JOB_STATE_DONE},
    {{v1::JOB_STATE_QUEUED, JobChange::kFail}, v1::JOB_STATE_FAILED},
    {{v1::JOB_STATE_QUEUED, JobChange::kCancel}, v1::JOB_STATE_CANCELLED},
    {{v1::JOB_STATE_RUNNING, JobChange::kRequeue}, v1::JOB_STATE_QUEUED},
    {{v1::JOB_STATE_RUNNING, JobChange::kFinish}, v1::JOB_STATE_DONE},
    {{v1::JOB_STATE_RUNNING, JobChange::kFail}, v1::JOB_STATE_FAILED},
    {{v1::JOB_STATE_RUNNING, JobChange::kCancel}, v1::JOB_STATE_CANCELLED},
};

TEST(JobState, EveryChangeFromEveryStateIsAllowedOrRefusedAsTheProtoSays) {
  int allowed = 0;
  for (JobState from : kStates) {
    for (JobChange change : kChanges) {
      const absl::StatusOr<JobState> next = NextState(from, change);
      const auto expected = kExpected.find({from, change});
      const std::string what = absl::StrCat(JobStateName(from), " / ", JobChangeName(change));
      if (expected == kExpected.end()) {
        ASSERT_FALSE(next.ok()) << what << " was allowed";
        EXPECT_EQ(next.status().code(), absl::StatusCode::kFailedPrecondition) << what;
        EXPECT_NE(next.status().message().find(JobStateName(from)), std::string::npos) << next.status();
      } else {
        ASSERT_TRUE(next.ok()) << what << ": " << next.status();
        EXPECT_EQ(*next, expected->second) << what;
        ++allowed;
      }
    }
  }
  EXPECT_EQ(allowed, static_cast<int>(JobTransitions().size())) << "the table holds rows the walk never met";
}

TEST(JobState, TheFinalStatesAreThoseNoChangeLeaves) {
  for (JobState s : kStates) {
    const bool final = s == v1::JOB_STATE_DONE || s == v1::JOB_STATE_FAILED || s == v1::JOB_STATE_CANCELLED;
    EXPECT_EQ(IsFinal(s), final) << JobStateName(s);
  }
}

TEST(JobState, NamesReadBackAndUnknownNamesAreNone) {
  for (JobState s : kStates) {
    if (s == v1::JOB_STATE_UNSPECIFIED) {
      EXPECT_FALSE(JobStateFromName(JobStateName(s)));
    } else {
      EXPECT_EQ(JobStateFromName(JobStateName(s)), s);
    }
  }
  EXPECT_EQ(JobStateName(v1::JOB_STATE_DONE), "done");
  EXPECT_FALSE(JobStateFromName("DONE"));
  EXPECT_FALSE(JobStateFromName(""));
}

}  // namespace
}  // namespace npuzzle
