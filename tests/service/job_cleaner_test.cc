// Retention against a real store: only finished jobs past the retention
// go, in batches, whatever their final state; queued, running and recent
// jobs stay.
#include "service/jobs/job_cleaner.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "service/jobs/job_record.h"
#include "service/store/sqlite_job_store.h"
#include "tests/util/process_util.h"

namespace npuzzle {
namespace {

class JobCleanerTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = *SqliteJobStore::Open(dir_.path() + "/jobs.db"); }

  // Job `i`, in `state`, finished `ago` (unfinished states: not finished).
  void Add(int i, v1::JobState state, absl::Duration ago = absl::ZeroDuration()) {
    v1::Job job;
    job.set_id(absl::StrCat("job-", i));
    job.set_state(state);
    if (state != v1::JOB_STATE_QUEUED && state != v1::JOB_STATE_RUNNING) {
      SetTime(job.mutable_finish_time(), absl::Now() - ago);
    }
    ASSERT_TRUE(store_->Commit({{job, i + 1}})[0].ok());
  }
  bool Kept(int i) { return store_->Get(absl::StrCat("job-", i)).ok(); }

  testing::TempDir dir_;
  std::unique_ptr<JobStore> store_;
};

TEST_F(JobCleanerTest, DeletesOnlyFinishedJobsPastTheRetentionInBatches) {
  int next = 0;
  for (v1::JobState final : {v1::JOB_STATE_DONE, v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED}) {
    for (int k = 0; k < 5; ++k) Add(next++, final, absl::Hours(2));  // 0-4, 5-9, 10-14: old
  }
  Add(next++, v1::JOB_STATE_DONE, absl::Minutes(10));  // 15: recent
  Add(next++, v1::JOB_STATE_QUEUED);                   // 16
  Add(next++, v1::JOB_STATE_RUNNING);                  // 17
  JobCleaner cleaner(store_.get(), {.retain = absl::Hours(1), .batch = 2});
  absl::StatusOr<int> deleted = cleaner.RunOnce(absl::Now());
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 15);
  for (int i = 0; i < 15; ++i) EXPECT_FALSE(Kept(i)) << i;
  for (int i = 15; i < 18; ++i) EXPECT_TRUE(Kept(i)) << i;
  EXPECT_EQ(*cleaner.RunOnce(absl::Now()), 0);
  // An hour on, the recent one is old too; the unfinished ones never are.
  EXPECT_EQ(*cleaner.RunOnce(absl::Now() + absl::Hours(1)), 1);
  EXPECT_TRUE(Kept(16));
  EXPECT_TRUE(Kept(17));
}

TEST_F(JobCleanerTest, RunsByItselfOnceStarted) {
  Add(0, v1::JOB_STATE_DONE, absl::Seconds(5));
  Add(1, v1::JOB_STATE_QUEUED);
  JobCleaner cleaner(store_.get(), {.retain = absl::Seconds(1)});
  std::atomic<int> heard = 0;
  cleaner.Start([&](int deleted) { heard += deleted; });
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (heard == 0 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(heard, 1);
  EXPECT_FALSE(Kept(0));
  EXPECT_TRUE(Kept(1));
}

}  // namespace
}  // namespace npuzzle
