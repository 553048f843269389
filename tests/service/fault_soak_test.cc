// A bounded fault soak: jobs are submitted while workers and the
// coordinator are killed with SIGKILL at random moments and restarted.
// Afterwards every acknowledged job must be present once, finished with
// exactly one final result of the optimal length whose moves replay, and
// the stored result must equal the one reported, also after one more
// coordinator crash.
//
// The defaults (seed 1, 300 jobs) take well under a minute; soak longer
// by hand with NPUZZLE_SOAK_SEED, NPUZZLE_SOAK_JOBS and NPUZZLE_SOAK_KILLS
// (the chance, in percent, of a kill after each batch of ten submissions).
#include <signal.h>

#include <map>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/util/service_harness.h"
#include "tests/util/soak_jobs.h"

namespace npuzzle {
namespace {

using testing::Coordinator;

class Cluster {
 public:
  explicit Cluster(const testing::TempDir& dir)
      // Kills here are deliberate, so no job may fail for losing its worker
      // too often (the service's defence against jobs that crash workers).
      : dir_(dir),
        coordinator_(dir, 0, {"--lease-timeout-ms=2000", "--recovery-grace-ms=1000", "--max-lost-attempts=1000000"}) {
    coordinator_.Start();
    for (const char* id : {"a", "b"}) workers_[id] = testing::StartWorker(coordinator_, dir_, id);
  }

  Coordinator& coordinator() { return coordinator_; }

  void KillCoordinator() {
    coordinator_.process()->Signal(SIGKILL);
    coordinator_.process()->Wait(absl::Seconds(10));
    ++coordinator_kills_;
    coordinator_.Start();
  }

  void KillWorker(const std::string& id) {
    workers_[id]->Signal(SIGKILL);
    workers_[id]->Wait(absl::Seconds(10));
    ++worker_kills_;
    workers_[id] = testing::StartWorker(coordinator_, dir_, id);
  }

  int coordinator_kills() const { return coordinator_kills_; }
  int worker_kills() const { return worker_kills_; }

 private:
  const testing::TempDir& dir_;
  Coordinator coordinator_;
  std::map<std::string, std::unique_ptr<testing::Process>> workers_;
  int coordinator_kills_ = 0;
  int worker_kills_ = 0;
};

// Submits until acknowledged; a refusal while the coordinator restarts is
// retried with the same request id, which must name the same job.
std::string SubmitUntilAcknowledged(Cluster& cluster, const testing::ExpectedJob& e) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    absl::StatusOr<v1::Job> job = testing::Submit(cluster.coordinator().stub(), e.spec);
    if (job.ok()) return job->id();
    EXPECT_NE(job.status().code(), absl::StatusCode::kInvalidArgument) << job.status();
    absl::SleepFor(absl::Milliseconds(100));
  }
  ADD_FAILURE() << e.request_id << " was never acknowledged";
  return "";
}

void CheckEveryJob(Cluster& cluster, const std::vector<testing::ExpectedJob>& jobs,
                   std::map<std::string, v1::Result>* results) {
  for (const testing::ExpectedJob& e : jobs) {
    SCOPED_TRACE(absl::StrCat(e.request_id, " = ", e.job_id));
    absl::StatusOr<v1::Job> job =
        testing::AwaitState(cluster.coordinator().stub(), e.job_id, v1::JOB_STATE_DONE, absl::Seconds(120));
    ASSERT_TRUE(job.ok()) << job.status();
    testing::ExpectSolvedAsExpected(*job, e);
    const testing::Watched w = testing::WatchToEnd(cluster.coordinator().stub(), e.job_id, absl::Seconds(10));
    ASSERT_EQ(w.finals(), 1);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(w.final_job()->result(), job->result()));
    if (auto it = results->find(e.job_id); it != results->end()) {
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(it->second, job->result()))
          << "the stored result changed";
    }
    (*results)[e.job_id] = job->result();
  }
}

TEST(FaultSoak, NothingAcknowledgedIsLostOrFinishedTwice) {
  const int seed = testing::SoakSetting("NPUZZLE_SOAK_SEED", 1);
  const int count = testing::SoakSetting("NPUZZLE_SOAK_JOBS", 300);
  const int kill_percent = testing::SoakSetting("NPUZZLE_SOAK_KILLS", 60);
  std::mt19937_64 rng(seed);
  std::vector<testing::ExpectedJob> jobs = testing::MakeSoakJobs(count, 4, rng);

  testing::TempDir dir;
  Cluster cluster(dir);
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].job_id = SubmitUntilAcknowledged(cluster, jobs[i]);
    if (i % 10 != 9) continue;
    absl::SleepFor(absl::Milliseconds(rng() % 300));
    if (static_cast<int>(rng() % 100) < kill_percent) {
      if (rng() % 3 == 0) {
        cluster.KillCoordinator();
      } else {
        cluster.KillWorker(rng() % 2 == 0 ? "a" : "b");
      }
    }
  }
  std::cout << "seed " << seed << ": " << jobs.size() << " jobs, " << cluster.coordinator_kills()
            << " coordinator kills, " << cluster.worker_kills() << " worker kills\n";
  EXPECT_GT(cluster.coordinator_kills() + cluster.worker_kills(), 0);

  // Resubmitting every request names the job it did the first time.
  for (const testing::ExpectedJob& e : jobs) EXPECT_EQ(SubmitUntilAcknowledged(cluster, e), e.job_id) << e.request_id;

  std::map<std::string, v1::Result> results;
  CheckEveryJob(cluster, jobs, &results);
  // No job was created twice.
  v1::ListJobsRequest list;
  list.set_page_size(1000);
  v1::ListJobsResponse listed;
  grpc::ClientContext context;
  ASSERT_TRUE(cluster.coordinator().stub().ListJobs(&context, list, &listed).ok());
  EXPECT_EQ(listed.jobs_size(), count);

  // What was reported is what is stored: the same after one more crash.
  cluster.KillCoordinator();
  CheckEveryJob(cluster, jobs, &results);
}

}  // namespace
}  // namespace npuzzle
