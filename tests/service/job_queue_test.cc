// The queue of waiting jobs on its own: its order (priority, then tenants
// in turn, then submission), the time before which a job waits, and the
// tenants passed over at their running quota.
#include "service/jobs/job_queue.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

v1::Job Job(const std::string& id, const std::string& tenant = "", int priority = 0) {
  v1::Job job;
  job.set_id(id);
  job.set_tenant(tenant);
  job.mutable_spec()->set_priority(priority);
  return job;
}

std::vector<std::string> PopAll(JobQueue& queue, absl::Time now = absl::Now()) {
  std::vector<std::string> order;
  while (auto id = queue.PopReady(now, [](const std::string&) { return true; })) order.push_back(*id);
  return order;
}

TEST(JobQueue, HigherPriorityFirstThenTenantsInTurnThenOldestFirst) {
  JobQueue queue;
  queue.Push(Job("a1", "a"), 1);
  queue.Push(Job("a2", "a"), 2);
  queue.Push(Job("a3", "a"), 3);
  queue.Push(Job("b1", "b"), 4);
  queue.Push(Job("urgent", "a", 5), 5);
  queue.Push(Job("low", "b", -1), 6);
  EXPECT_EQ(queue.TopPriority(), 5);
  EXPECT_EQ(queue.QueuedOf("a"), 4u);
  EXPECT_EQ(PopAll(queue), (std::vector<std::string>{"urgent", "a1", "b1", "a2", "a3", "low"}));
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_FALSE(queue.TopPriority());
}

TEST(JobQueue, AJobPushedTwiceIsQueuedOnceAndErasedJobsAreGone) {
  JobQueue queue;
  queue.Push(Job("x"), 1);
  queue.Push(Job("x"), 1);
  queue.Push(Job("y"), 2);
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_TRUE(queue.Erase("x"));
  EXPECT_FALSE(queue.Erase("x"));
  EXPECT_FALSE(queue.Contains("x"));
  EXPECT_EQ(PopAll(queue), std::vector<std::string>{"y"});
  EXPECT_TRUE(queue.QueuedByTenant().empty());
}

TEST(JobQueue, AJobWaitsUntilItsTimeAndOthersGoFirst) {
  JobQueue queue;
  const absl::Time now = absl::Now();
  queue.Push(Job("later"), 1, now + absl::Seconds(3));
  queue.Push(Job("now"), 2);
  EXPECT_EQ(PopAll(queue, now), std::vector<std::string>{"now"});
  EXPECT_TRUE(queue.Contains("later"));
  EXPECT_EQ(PopAll(queue, now + absl::Seconds(3)), std::vector<std::string>{"later"});
}

TEST(JobQueue, ATenantAtItsQuotaIsPassedOverNotDropped) {
  JobQueue queue;
  queue.Push(Job("capped-1", "capped"), 1);
  queue.Push(Job("free-1", "free"), 2);
  const auto not_capped = [](const std::string& tenant) { return tenant != "capped"; };
  EXPECT_EQ(queue.PopReady(absl::Now(), not_capped), "free-1");
  EXPECT_FALSE(queue.PopReady(absl::Now(), not_capped));
  EXPECT_EQ(queue.QueuedOf("capped"), 1u);
  EXPECT_EQ(PopAll(queue), std::vector<std::string>{"capped-1"});
}

// Position says where each job stands in exactly the order PopReady then
// hands them out, over random mixes of priorities and tenants, including
// queues whose tenants have already taken turns.
TEST(JobQueue, PositionsAreThePopOrder) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    JobQueue queue;
    int64_t seq = 0;
    auto push_some = [&](int n) {
      for (int i = 0; i < n; ++i) {
        const std::string id = absl::StrCat("j", ++seq);
        queue.Push(Job(id, absl::StrCat("t", rng() % 4), static_cast<int>(rng() % 3)), seq);
      }
    };
    push_some(30);
    for (int i = 0; i < 5; ++i) queue.PopReady(absl::Now(), [](const std::string&) { return true; });
    push_some(10);
    std::map<std::string, size_t> positions;
    for (int64_t s = 1; s <= seq; ++s) {
      const std::string id = absl::StrCat("j", s);
      if (queue.Contains(id)) positions[id] = queue.Position(id);
    }
    const std::vector<std::string> order = PopAll(queue);
    ASSERT_EQ(order.size(), positions.size());
    for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(positions[order[i]], i + 1) << "trial " << trial;
  }
  EXPECT_EQ(JobQueue().Position("absent"), 0u);
}

}  // namespace
}  // namespace npuzzle
