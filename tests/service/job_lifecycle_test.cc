// The one place a job's state changes, on its own: changes only where the
// table allows, each stored before anyone hears of it, a final state
// reported and forgotten only once stored, and a job whose final row
// cannot be stored back in the queue. Writes are completed by hand here,
// with the outcome each case needs.
#include "service/jobs/job_lifecycle.h"

#include <functional>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

v1::Job NewJob(const std::string& id) {
  v1::Job job;
  job.set_id(id);
  return job;
}

class JobLifecycleTest : public ::testing::Test {
 protected:
  // Completes every write queued so far with `outcome`, in order.
  void Commit(const absl::Status& outcome = absl::OkStatus()) {
    for (StoreWriter::Write& w : lifecycle_.TakeWrites()) {
      if (w.done) w.done(outcome);
    }
    for (auto& call : std::exchange(later_, {})) call();
  }
  std::vector<v1::JobEvent> Events(JobWatch& watch) {
    std::vector<v1::JobEvent> events;
    bool last = false;
    while (auto e = watch.Next(&last)) events.push_back(*e);
    return events;
  }
  JobRecord& Admitted(const std::string& id) {
    JobRecord& r = lifecycle_.Admit(NewJob(id), ++seq_, [](const absl::Status&) {});
    Commit();
    return r;
  }

  int seq_ = 0;
  int ending_ = 0;
  std::vector<std::function<void()>> later_;
  JobEvents events_;
  ManagerMetrics metrics_{{.jobs_by_state = [] { return std::map<v1::JobState, int64_t>{}; },
                           .counts = [] { return ManagerCounts{}; },
                           .workers = [] { return std::vector<WorkerGauges>{}; },
                           .tenants = [] { return std::vector<TenantGauges>{}; }}};
  JobLifecycle lifecycle_{&events_,
                          &metrics_,
                          {.ending = [this](JobRecord&) { ++ending_; },
                           .later = [this](std::function<void()> call) { later_.push_back(std::move(call)); }}};
};

TEST_F(JobLifecycleTest, AnAdmittedJobIsQueuedAndWatchersHearOfAChangeOnlyOnceItIsStored) {
  JobRecord& r = Admitted("job-1");
  EXPECT_EQ(r.job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(lifecycle_.queue().Contains("job-1"));
  auto watch = std::make_shared<JobWatch>();
  events_.Watch(r.job, watch);
  ASSERT_TRUE(lifecycle_.Start(r, "w1", 1, /*adopted=*/false, nullptr));
  EXPECT_EQ(r.job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_FALSE(lifecycle_.queue().Contains("job-1"));
  EXPECT_EQ(Events(*watch).size(), 1u) << "told before the row was stored";
  Commit();
  const std::vector<v1::JobEvent> events = Events(*watch);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].state().state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(events[0].state().worker_id(), "w1");
  EXPECT_EQ(r.durable_attempt, 1);
}

TEST_F(JobLifecycleTest, AChangeTheTableForbidsChangesNothingAndIsCounted) {
  JobRecord& r = Admitted("job-1");
  lifecycle_.Requeue(r, JobLifecycle::Requeued::kReleased);  // queued already
  EXPECT_EQ(lifecycle_.refused(), 1);
  ASSERT_TRUE(lifecycle_.Start(r, "w1", 1, false, nullptr));
  EXPECT_FALSE(lifecycle_.Start(r, "w2", 2, false, nullptr));
  EXPECT_EQ(lifecycle_.refused(), 2);
  EXPECT_EQ(r.job.worker_id(), "w1");
  EXPECT_EQ(r.job.attempt(), 1);
}

TEST_F(JobLifecycleTest, AFinalStateIsToldAndTheJobForgottenOnlyOnceStored) {
  JobRecord& r = Admitted("job-1");
  ASSERT_TRUE(lifecycle_.Start(r, "w1", 1, false, nullptr));
  Commit();
  auto watch = std::make_shared<JobWatch>();
  events_.Watch(r.job, watch);
  v1::Job waited;
  events_.Wait("job-1", absl::InfiniteFuture(), [&](const v1::Job& job) { waited = job; });
  v1::Result result;
  result.set_status("solved");
  lifecycle_.End(r, JobChange::kFinish, &result, "");
  EXPECT_EQ(ending_, 1);
  ASSERT_NE(lifecycle_.Find("job-1"), nullptr);
  EXPECT_EQ(lifecycle_.Find("job-1")->job.state(), v1::JOB_STATE_RUNNING) << "reported final before stored";
  lifecycle_.End(*lifecycle_.Find("job-1"), JobChange::kCancel, nullptr, "");
  EXPECT_EQ(lifecycle_.refused(), 1) << "a second end while the first is stored";
  Commit();
  EXPECT_EQ(lifecycle_.Find("job-1"), nullptr);
  EXPECT_EQ(waited.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(waited.result().status(), "solved");
  const std::vector<v1::JobEvent> events = Events(*watch);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].state().state(), v1::JOB_STATE_DONE);
}

TEST_F(JobLifecycleTest, AFinalStateThatCannotBeStoredIsNotFinalAndTheJobWaitsAgain) {
  JobRecord& r = Admitted("job-1");
  ASSERT_TRUE(lifecycle_.Start(r, "w1", 1, false, nullptr));
  Commit();
  lifecycle_.End(r, JobChange::kFail, nullptr, "boom");
  Commit(absl::UnavailableError("disk full"));
  const JobRecord* back = lifecycle_.Find("job-1");
  ASSERT_NE(back, nullptr);
  EXPECT_FALSE(back->ending());
  EXPECT_EQ(back->job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(lifecycle_.queue().Contains("job-1"));
}

TEST_F(JobLifecycleTest, ADecidedJobIsFinalAtOnceAndForgottenOnceStored) {
  v1::Job job = NewJob("job-1");
  job.mutable_result()->set_status("unsolvable");
  absl::Status outcome = absl::UnknownError("not called");
  JobRecord& r = lifecycle_.Admit(job, 1, [&](const absl::Status& s) { outcome = s; });
  EXPECT_EQ(r.job.state(), v1::JOB_STATE_DONE);
  EXPECT_FALSE(lifecycle_.queue().Contains("job-1"));
  Commit();
  EXPECT_TRUE(outcome.ok());
  EXPECT_EQ(lifecycle_.Find("job-1"), nullptr);
}

TEST_F(JobLifecycleTest, AJobWhoseFirstRowFailsIsForgotten) {
  absl::Status outcome;
  lifecycle_.Admit(NewJob("job-1"), 1, [&](const absl::Status& s) { outcome = s; });
  Commit(absl::AlreadyExistsError("taken"));
  EXPECT_TRUE(absl::IsAlreadyExists(outcome));
  EXPECT_EQ(lifecycle_.Find("job-1"), nullptr);
  EXPECT_EQ(lifecycle_.queue().size(), 0u);
}

TEST_F(JobLifecycleTest, ReloadedRunningJobsWaitUnclaimedForTheGraceAndSkipAnAttempt) {
  JobStore::Row running{NewJob("running"), 1};
  running.job.set_state(v1::JOB_STATE_RUNNING);
  running.job.set_attempt(4);
  JobStore::Row queued{NewJob("queued"), 2};
  queued.job.set_state(v1::JOB_STATE_QUEUED);
  const absl::Time resume = absl::Now() + absl::Hours(1);
  lifecycle_.Reload({running, queued}, resume, [](const absl::Status&) {});
  Commit();
  const JobRecord& r = *lifecycle_.Find("running");
  EXPECT_EQ(r.job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(r.unclaimed);
  EXPECT_EQ(r.NextAttempt(), 6) << "attempt 5 may have gone out unstored";
  EXPECT_EQ(lifecycle_.queue().PopReady(absl::Now(), [](const std::string&) { return true; }), "queued");
  EXPECT_FALSE(lifecycle_.queue().PopReady(absl::Now(), [](const std::string&) { return true; }));
  EXPECT_EQ(lifecycle_.queue().PopReady(resume, [](const std::string&) { return true; }), "running");
}

}  // namespace
}  // namespace npuzzle
