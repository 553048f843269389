// Watchers and waiters on their own: a watch starts with the job as it is,
// gets every state and the newest progress, and ends with the final state;
// a slow reader's backlog is bounded but keeps every state; waiters are
// called once, at the end or at their deadline.
#include "service/jobs/job_events.h"

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

v1::Job JobIn(v1::JobState state) {
  v1::Job job;
  job.set_id("job-1");
  job.set_state(state);
  return job;
}

v1::Progress Expanded(uint64_t n) {
  v1::Progress p;
  p.set_expanded(n);
  return p;
}

std::vector<v1::JobEvent> Read(JobWatch& watch, bool* ended) {
  std::vector<v1::JobEvent> events;
  *ended = false;
  while (auto e = watch.Next(ended)) {
    events.push_back(*e);
    if (*ended) break;
  }
  return events;
}

TEST(JobEvents, AWatchSeesTheJobNowThenEveryStateAndTheNewestProgress) {
  JobEvents events;
  auto watch = std::make_shared<JobWatch>();
  events.Watch(JobIn(v1::JOB_STATE_QUEUED), watch);
  events.State(JobIn(v1::JOB_STATE_RUNNING));
  events.Progress("job-1", Expanded(1));
  events.Progress("job-1", Expanded(2));
  events.Progress("other", Expanded(9));
  EXPECT_TRUE(events.Final(JobIn(v1::JOB_STATE_DONE)).empty());
  events.State(JobIn(v1::JOB_STATE_RUNNING));  // after the end: nobody listens
  bool ended = false;
  const std::vector<v1::JobEvent> seen = Read(*watch, &ended);
  EXPECT_TRUE(ended);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].state().state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(seen[1].state().state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(seen[2].progress().expanded(), 2u);
  EXPECT_EQ(seen[3].state().state(), v1::JOB_STATE_DONE);
}

TEST(JobEvents, ASlowReadersBacklogIsBoundedButKeepsEveryState) {
  JobEvents events;
  auto watch = std::make_shared<JobWatch>();
  events.Watch(JobIn(v1::JOB_STATE_QUEUED), watch);
  for (int i = 0; i < 1000; ++i) {
    events.State(JobIn(i % 2 ? v1::JOB_STATE_QUEUED : v1::JOB_STATE_RUNNING));
    events.Progress("job-1", Expanded(i));
  }
  events.Final(JobIn(v1::JOB_STATE_DONE));
  bool ended = false;
  const std::vector<v1::JobEvent> seen = Read(*watch, &ended);
  EXPECT_TRUE(ended);
  int states = 0;
  for (const v1::JobEvent& e : seen) states += e.has_state();
  EXPECT_EQ(states, 1002);
  EXPECT_LE(seen.size(), 1002u + JobWatch::kMaxBacklog);
}

TEST(JobEvents, WaitersAreCalledOnceAtTheEndOrAtTheirDeadline) {
  JobEvents events;
  const absl::Time now = absl::Now();
  int at_end = 0;
  int expired = 0;
  events.Wait("job-1", now + absl::Hours(1), [&](const v1::Job& job) {
    EXPECT_EQ(job.state(), v1::JOB_STATE_DONE);
    ++at_end;
  });
  events.Wait("job-1", now + absl::Seconds(1), [&](const v1::Job&) { ++expired; });
  auto late = events.Expired(now + absl::Seconds(2));
  ASSERT_EQ(late.size(), 1u);
  late[0].second(JobIn(v1::JOB_STATE_RUNNING));
  for (auto& call : events.Final(JobIn(v1::JOB_STATE_DONE))) call();
  EXPECT_EQ(at_end, 1);
  EXPECT_EQ(expired, 1);
  EXPECT_TRUE(events.Expired(now + absl::Hours(2)).empty());
}

TEST(JobEvents, AnAbandonedWatchTakesNothingMore) {
  JobEvents events;
  auto watch = std::make_shared<JobWatch>();
  events.Watch(JobIn(v1::JOB_STATE_QUEUED), watch);
  watch->Abandon();
  events.State(JobIn(v1::JOB_STATE_RUNNING));
  bool ended = false;
  EXPECT_TRUE(Read(*watch, &ended).empty());
}

}  // namespace
}  // namespace npuzzle
