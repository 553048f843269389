// Coordinators that fail over, under load: three coordinators over one
// PostgreSQL database (one active, two standbys forwarding to it), local
// and remote workers, 2,000 jobs submitted through all three addresses by
// clients that retry with the job's request id, and a watcher for every
// job. Midway the active coordinator is killed with SIGKILL, and later the
// database is restarted. Afterwards every job has ended exactly once, with
// an answer of the right length that replays; every watcher saw its job's
// result, and the store holds that same result; no request made two jobs.
//
// NPUZZLE_FAILOVER_JOBS and NPUZZLE_FAILOVER_SEED change the load.
#include <signal.h>

#include <atomic>
#include <deque>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/util/postgres_harness.h"
#include "tests/util/service_harness.h"
#include "tests/util/soak_jobs.h"

namespace npuzzle {
namespace {

using testing::Coordinator;

// A client's connections to every coordinator; calls go round them, so a
// refusal from one (killed, or its database down) is retried at the next.
class Clients {
 public:
  explicit Clients(const std::vector<std::string>& addresses) {
    for (const std::string& a : addresses) stubs_.push_back(testing::Dial(a));
  }

  // The job's id once some coordinator acknowledged it; "" if none did,
  // and then `last_error` says what the last one answered.
  std::string Submit(const v1::JobSpec& spec, int turn, std::string* last_error = nullptr) {
    for (int attempt = 0; attempt < 400; ++attempt) {
      absl::StatusOr<v1::Job> job = testing::Submit(Next(turn, attempt), spec);
      if (job.ok()) return job->id();
      EXPECT_NE(job.status().code(), absl::StatusCode::kInvalidArgument) << job.status();
      if (last_error != nullptr) *last_error = job.status().ToString();
      absl::SleepFor(absl::Milliseconds(50));
    }
    return "";
  }

  // The watch that saw the job end, dialing again (elsewhere) whenever a
  // stream breaks first.
  testing::Watched WatchUntilItEnds(const std::string& id, int turn) {
    testing::Watched w;
    for (int attempt = 0; attempt < 400; ++attempt) {
      w = testing::WatchToEnd(Next(turn, attempt), id, absl::Seconds(60));
      if (w.finals() > 0) return w;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return w;
  }

  // The coordinator that answers now.
  v1::SolverService::Stub& Active() {
    for (int attempt = 0;; ++attempt) {
      v1::SolverService::Stub& stub = Next(0, attempt);
      if (testing::GetJob(stub, "probe").status().code() == absl::StatusCode::kNotFound || attempt > 300) return stub;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

 private:
  v1::SolverService::Stub& Next(int turn, int attempt) { return *stubs_[(turn + attempt) % stubs_.size()]; }

  std::vector<std::unique_ptr<v1::SolverService::Stub>> stubs_;
};

// On a failure, prints the coordinators' logs: when each took over,
// listened and advertised is what tells an outage's cause, and CI keeps
// nothing of a test but its output.
class LogsOnFailure {
 public:
  explicit LogsOnFailure(std::vector<Coordinator*> coordinators) : coordinators_(std::move(coordinators)) {}
  ~LogsOnFailure() {
    if (!::testing::Test::HasFailure()) return;
    for (Coordinator* c : coordinators_) std::cout << "--- a coordinator's log:\n" << c->process()->Log() << "\n";
  }

 private:
  std::vector<Coordinator*> coordinators_;
};

TEST(FailoverSoak, EveryJobEndsOnceThroughAKilledCoordinatorAndADatabaseRestart) {
  const int count = testing::SoakSetting("NPUZZLE_FAILOVER_JOBS", 2000);
  std::mt19937_64 rng(testing::SoakSetting("NPUZZLE_FAILOVER_SEED", 1));
  std::vector<testing::ExpectedJob> jobs = testing::MakeSoakJobs(count, 20, rng);

  testing::Postgres pg;
  ASSERT_TRUE(pg.ok()) << pg.status();
  testing::TempDir dir_a, dir_b, dir_c, dir_w;
  // Kills here are deliberate: no job may fail for losing workers often.
  const std::vector<std::string> flags = {"--store=" + pg.uri(), "--standby", "--advertise-host=127.0.0.1",
                                          "--max-lost-attempts=1000000"};
  Coordinator a(dir_a, 1, flags);
  a.Start();
  Coordinator b(dir_b, 1, flags);
  b.Launch();
  Coordinator c(dir_c, 0, flags);
  c.Launch();
  const LogsOnFailure logs({&a, &b, &c});
  for (Coordinator* standby : {&b, &c}) {
    ASSERT_TRUE(testing::Eventually(absl::Seconds(10), [&] {
      return absl::StrContains(standby->process()->Log(), "forwarding to the active coordinator");
    })) << standby->process()->Log();
  }
  // Remote workers that know only a standby's address.
  std::unique_ptr<testing::Process> w1 = testing::StartWorker(b, dir_w, "w1");
  std::unique_ptr<testing::Process> w2 = testing::StartWorker(c, dir_w, "w2");
  const std::vector<std::string> addresses = {a.client_address(), b.client_address(), c.client_address()};

  absl::Mutex mu;
  std::deque<int> to_watch;  // acknowledged, not yet watched
  std::atomic<int> acknowledged = 0;
  std::atomic<int> submitters_left = 4;
  std::vector<testing::Watched> watched(count);
  std::vector<std::string> submit_errors(count);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Clients clients(addresses);
      for (int i = t; i < count; i += 4) {
        jobs[i].job_id = clients.Submit(jobs[i].spec, i, &submit_errors[i]);
        absl::MutexLock lock(&mu);
        to_watch.push_back(i);
        ++acknowledged;
      }
      --submitters_left;
    });
  }
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      Clients clients(addresses);
      for (;;) {
        int i = -1;
        {
          absl::MutexLock lock(&mu);
          if (!to_watch.empty()) {
            i = to_watch.front();
            to_watch.pop_front();
          }
        }
        if (i < 0 && submitters_left == 0) {
          absl::MutexLock lock(&mu);
          if (to_watch.empty()) return;
          continue;
        }
        if (i < 0) {
          absl::SleepFor(absl::Milliseconds(10));
          continue;
        }
        if (!jobs[i].job_id.empty()) watched[i] = clients.WatchUntilItEnds(jobs[i].job_id, t);
      }
    });
  }

  // The faults, at set points of the load.
  const absl::Time start = absl::Now();
  const auto await_acknowledged = [&](int n) {
    return testing::Eventually(absl::Seconds(120), [&] { return acknowledged >= n; });
  };
  ASSERT_TRUE(await_acknowledged(count * 3 / 10));
  a.process()->Signal(SIGKILL);
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(testing::Eventually(absl::Seconds(20), [&] {
    return absl::StrContains(b.process()->Log(), "taking over") || absl::StrContains(c.process()->Log(), "taking over");
  }));
  const absl::Duration takeover = absl::Now() - killed;
  ASSERT_TRUE(await_acknowledged(count * 7 / 10));
  ASSERT_TRUE(pg.Stop().ok());
  absl::SleepFor(absl::Seconds(2));
  ASSERT_TRUE(pg.Start().ok());
  for (std::thread& t : threads) t.join();
  const absl::Duration took = absl::Now() - start;
  std::cout << count << " jobs submitted and watched to their end in " << took << "; the takeover was logged "
            << takeover << " after the kill\n";

  // Checked on four connections at once, as 2,000 one at a time take long.
  std::vector<std::thread> checkers;
  for (int t = 0; t < 4; ++t) {
    checkers.emplace_back([&, t] {
      Clients clients(addresses);
      v1::SolverService::Stub& active = clients.Active();
      for (int i = t; i < count; i += 4) {
        const testing::ExpectedJob& e = jobs[i];
        SCOPED_TRACE(e.request_id);
        if (e.job_id.empty()) {
          ADD_FAILURE() << "never acknowledged: " << submit_errors[i];
          continue;
        }
        EXPECT_EQ(watched[i].finals(), 1) << "watched to its end: " << watched[i].status.error_message();
        if (watched[i].finals() == 0) continue;
        testing::ExpectSolvedAsExpected(*watched[i].final_job(), e);
        absl::StatusOr<v1::Job> stored = testing::GetJob(active, e.job_id);
        EXPECT_TRUE(stored.ok()) << stored.status();
        EXPECT_TRUE(stored.ok() && google::protobuf::util::MessageDifferencer::Equals(stored->result(),
                                                                                      watched[i].final_job()->result()))
            << "the stored result is not the one watched";
        EXPECT_EQ(clients.Submit(e.spec, i), e.job_id) << "a request made two jobs";
      }
    });
  }
  for (std::thread& t : checkers) t.join();
  Clients clients(addresses);
  v1::SolverService::Stub& active = clients.Active();
  int listed = 0;
  v1::ListJobsRequest list;
  list.set_page_size(1000);
  do {
    v1::ListJobsResponse page;
    grpc::ClientContext context;
    ASSERT_TRUE(active.ListJobs(&context, list, &page).ok());
    listed += page.jobs_size();
    list.set_page_token(page.next_page_token());
  } while (!list.page_token().empty());
  EXPECT_EQ(listed, count);
}

}  // namespace
}  // namespace npuzzle
