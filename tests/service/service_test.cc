// The whole service, end to end: a real coordinator and real workers on
// loopback, a real SQLite file, real signals.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/board_parser.h"
#include "engine/goals.h"
#include "engine/instances.h"
#include "engine/moves.h"
#include "engine/puzzle.h"
#include "engine/solver.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "health_check.grpc.pb.h"
#include "jobspec/job_spec.h"
#include "jobspec/spec_bounds.h"
#include "npuzzle/v1/worker.grpc.pb.h"
#include "server_reflection.grpc.pb.h"
#include "service/store/sqlite_job_store.h"
#include "sqlite3.h"
#include "tests/util/exhaustive.h"
#include "tests/util/http_get.h"
#include "tests/util/postgres_harness.h"
#include "tests/util/process_util.h"
#include "tests/util/service_harness.h"

namespace npuzzle {
namespace {

using testing::AwaitState;
using testing::AwaitStoredState;
using testing::Cancel;
using testing::Coordinator;
using testing::GetJob;
using ::testing::HasSubstr;
using testing::SpecFor;
using testing::StartWorker;
using testing::Submit;
using testing::WatchToEnd;

// Korf's instances 3 and 4 (goal: blank first): a few seconds and about one
// second of IDA* with Manhattan distance.
constexpr char kKorf3[] = "14 7 8 2 13 11 10 4 9 12 5 0 3 6 1 15";
constexpr int kKorf3Length = 59;
constexpr char kKorf4[] = "5 12 10 7 15 11 14 0 8 2 1 13 3 4 9 6";
constexpr int kKorf4Length = 56;
// Korf's instance 1 with misplaced tiles: far longer than any test.
constexpr char kKorf1[] = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3";

// The job's moves take its start board to its goal.

// The coordinator's promises hold whichever store keeps its jobs: these
// tests run once on SQLite in the data directory, and once on a PostgreSQL
// cluster of their own (--store).
class EachStoreService : public ::testing::TestWithParam<std::string> {
 protected:
  // Flags that put the coordinator's jobs in the test's store.
  std::vector<std::string> StoreFlags() {
    if (GetParam() != "postgres") return {};
    pg_ = std::make_unique<testing::Postgres>();
    EXPECT_TRUE(pg_->ok()) << pg_->status();
    return {"--store=" + pg_->uri()};
  }

 private:
  std::unique_ptr<testing::Postgres> pg_;
};

TEST_P(EachStoreService, SolveStreamsStatesAndAResultThatReplays) {
  testing::TempDir dir;
  Coordinator c(dir, /*local_workers=*/1, StoreFlags());
  c.Start();
  grpc::ClientContext context;
  v1::SubmitJobRequest request;
  *request.mutable_spec() = SpecFor("8 1 3 4 0 2 7 6 5");
  auto reader = c.stub().Solve(&context, request);
  std::vector<v1::JobEvent> events;
  v1::JobEvent e;
  while (reader->Read(&e)) events.push_back(e);
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_FALSE(events.empty());
  const v1::Job& last = events.back().state();
  EXPECT_EQ(last.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(last.result().status(), "solved");
  EXPECT_EQ(last.result().length(), 14);
  EXPECT_TRUE(last.result().optimal());
  testing::ExpectReplays(last);

  // Several watchers of the finished job each get the result at once.
  for (int i = 0; i < 3; ++i) {
    const testing::Watched w = WatchToEnd(c.stub(), last.id(), absl::Seconds(5));
    EXPECT_TRUE(w.status.ok());
    ASSERT_EQ(w.events.size(), 1u);
    EXPECT_EQ(w.final_job()->result().moves(), last.result().moves());
  }
}

TEST(Service, ProgressStreamsWhileALongJobRuns) {
  testing::TempDir dir;
  Coordinator c(dir, 1, {"--worker-progress-ms=100"});
  c.Start();
  const std::string id = Submit(c.stub(), SpecFor(kKorf3, "blank-first", "idastar"))->id();
  const testing::Watched w = WatchToEnd(c.stub(), id, absl::Seconds(60));
  int progress = 0;
  uint64_t last_generated = 0;
  for (const v1::JobEvent& e : w.events) {
    if (!e.has_progress()) continue;
    ++progress;
    EXPECT_GE(e.progress().generated(), last_generated);
    last_generated = e.progress().generated();
    EXPECT_GT(e.progress().bound(), 0);
  }
  EXPECT_GE(progress, 3);
  ASSERT_EQ(w.finals(), 1);
  EXPECT_EQ(w.final_job()->result().length(), kKorf3Length);
}

// pdb_zero_aware reaches the worker's tables: the same job with them finds
// the same optimal length over fewer nodes (their values are never below
// the plain tables').
TEST(Service, PdbJobsUseZeroAwareTablesWhenAsked) {
  testing::TempDir dir;
  Coordinator c(dir, 1);
  c.Start();
  uint64_t expanded[2] = {0, 0};
  for (bool zero_aware : {false, true}) {
    v1::JobSpec spec = SpecFor(kKorf1, "blank-first", "idastar", "pdb");
    spec.set_pdb_preset("6-6-3");
    spec.set_pdb_zero_aware(zero_aware);
    spec.set_threads(1);
    const std::string id = Submit(c.stub(), spec)->id();
    absl::StatusOr<v1::Job> job = AwaitState(c.stub(), id, v1::JOB_STATE_DONE, absl::Seconds(120));
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->result().length(), 57);  // Korf's instance 1
    EXPECT_TRUE(job->result().optimal());
    EXPECT_TRUE(job->spec().pdb_zero_aware() == zero_aware);
    testing::ExpectReplays(*job);
    expanded[zero_aware] = job->result().stats().expanded();
  }
  EXPECT_LT(expanded[1], expanded[0]);
}

TEST(Service, IdempotencyValidationAndUnsolvableJobs) {
  testing::TempDir dir;
  Coordinator c(dir, 1, {"--max-memory-mb-ceiling=4096"});
  c.Start();
  v1::JobSpec spec = SpecFor("8 1 3 4 0 2 7 6 5");
  spec.set_request_id("order-42");
  const v1::Job first = *Submit(c.stub(), spec);
  const v1::Job again = *Submit(c.stub(), spec);
  EXPECT_EQ(first.id(), again.id());

  struct Bad {
    v1::JobSpec spec;
    const char* message;
  };
  v1::JobSpec algorithm = SpecFor("8 1 3 4 0 2 7 6 5", "standard", "dijkstra");
  v1::JobSpec heuristic = SpecFor("8 1 3 4 0 2 7 6 5", "standard", "astar", "euclid");
  v1::JobSpec memory = SpecFor("8 1 3 4 0 2 7 6 5");
  memory.mutable_limits()->set_max_memory_mb(100000);
  std::string big;
  for (int t = 1; t < 17 * 17; ++t) big += std::to_string(t) + " ";
  for (const Bad& bad : {Bad{SpecFor("1 2 3 4 5 5 7 8 0"), "start: duplicate tile 5"},
                         Bad{SpecFor(big + "0"), "board size 17x17 is out of range"},
                         Bad{algorithm, "unknown algorithm 'dijkstra'"}, Bad{heuristic, "unknown heuristic 'euclid'"},
                         Bad{SpecFor("8 1 3 4 0 2 7 6 5", "spiral"), "goal: unknown goal preset 'spiral'"},
                         Bad{memory, "exceeds this service's ceiling of 4096"}}) {
    const absl::Status s = Submit(c.stub(), bad.spec).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad.message;
    EXPECT_THAT(s.message(), HasSubstr(bad.message));
  }

  const v1::Job unsolvable = *Submit(c.stub(), SpecFor("1 2 3 4 5 6 8 7 0"));
  EXPECT_EQ(unsolvable.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(unsolvable.result().status(), "unsolvable");

  EXPECT_EQ(GetJob(c.stub(), "job-unknown").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(WatchToEnd(c.stub(), "job-unknown", absl::Seconds(5)).status.error_code(), grpc::StatusCode::NOT_FOUND);
  v1::Job reply;
  EXPECT_EQ(Cancel(c.stub(), unsolvable.id(), &reply).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  // The server keeps serving.
  EXPECT_EQ(AwaitState(c.stub(), first.id(), v1::JOB_STATE_DONE, absl::Seconds(10))->result().length(), 14);
}

TEST(Service, CancelQueuedAndRunningJobs) {
  testing::TempDir dir;
  Coordinator c(dir, 1);
  c.Start();
  const std::string running = Submit(c.stub(), SpecFor(kKorf1, "blank-first", "idastar", "misplaced"))->id();
  ASSERT_TRUE(AwaitState(c.stub(), running, v1::JOB_STATE_RUNNING, absl::Seconds(10)).ok());
  const std::string queued = Submit(c.stub(), SpecFor(kKorf1, "blank-first", "idastar", "misplaced"))->id();
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(GetJob(c.stub(), queued)->state(), v1::JOB_STATE_QUEUED);

  v1::Job job;
  ASSERT_TRUE(Cancel(c.stub(), queued, &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_CANCELLED);

  const absl::Time asked = absl::Now();
  ASSERT_TRUE(Cancel(c.stub(), running, &job).ok());
  const absl::Duration took = absl::Now() - asked;
  EXPECT_EQ(job.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(job.result().status(), "cancelled");
  EXPECT_GT(job.result().stats().expanded(), 0u);  // it had been searching
  EXPECT_LT(took, testing::Scaled(absl::Milliseconds(200))) << "stopping a running job took " << took;
}

// Two coordinators on one job store would run jobs twice; the second
// refuses at once, naming the directory and the holder. A killed holder
// leaves nothing behind that keeps its successor out, even with its local
// workers still alive.
TEST(Service, OneCoordinatorPerDataDirectory) {
  testing::TempDir dir;
  Coordinator c(dir, 1);
  c.Start();
  testing::Process second(
      {absl::StrCat(NPUZZLE_BIN_DIR, "/npuzzle-server"), "--data-dir=" + c.data_dir(), "--listen=127.0.0.1:0",
       "--worker-listen=127.0.0.1:0", "--metrics-listen=", "--http-listen=", "--local-workers=0"},
      dir.path() + "/second.log");
  EXPECT_EQ(second.Wait(absl::Seconds(10)), 1) << second.Log();
  EXPECT_THAT(second.Log(), HasSubstr("data directory " + c.data_dir() + " is in use"));
  EXPECT_THAT(second.Log(), HasSubstr(absl::StrCat("process ", c.process()->pid())));

  c.process()->Signal(SIGKILL);
  c.process()->Wait(absl::Seconds(10));
  c.Start();  // fails the test if the new server cannot take the directory
  EXPECT_TRUE(Submit(c.stub(), SpecFor("1 2 3 4 5 6 7 8 0", "standard", "astar")).ok());
}

TEST(Service, BackupCopiesARunningServersStore) {
  testing::TempDir dir;
  Coordinator c(dir, 1);
  c.Start();
  const std::string id = Submit(c.stub(), SpecFor("1 2 3 4 5 6 7 0 8", "standard", "astar"))->id();
  const std::string copy = dir.path() + "/copy/jobs.db";
  std::filesystem::create_directories(dir.path() + "/copy");
  testing::Process backup(
      {absl::StrCat(NPUZZLE_BIN_DIR, "/npuzzle-server"), "backup", "--data-dir=" + c.data_dir(), "--to=" + copy},
      dir.path() + "/backup.log");
  ASSERT_EQ(backup.Wait(absl::Seconds(20)), 0) << backup.Log();
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(copy);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<v1::Job> job = (*store)->Get(id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->id(), id);
  EXPECT_TRUE(c.process()->Running());
}

// No job runs forever by accident: one that sets no time limit gets the
// server's default, and none may ask for more than the ceiling.
TEST(Service, JobsWithoutATimeLimitGetTheServersDefault) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  absl::StatusOr<v1::Job> job = Submit(c.stub(), SpecFor("1 2 3 4 5 6 7 0 8", "standard", "astar"));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec().limits().max_time_ms(), 3600000u);
  v1::JobSpec greedy = SpecFor("1 2 3 4 5 6 7 0 8", "standard", "astar");
  greedy.mutable_limits()->set_max_time_ms(2 * 86400000ull);
  EXPECT_EQ(Submit(c.stub(), greedy).status().code(), absl::StatusCode::kInvalidArgument);
}

// The pids of a process's children, from /proc.
std::vector<pid_t> Children(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& task : std::filesystem::directory_iterator(absl::StrCat("/proc/", parent, "/task"))) {
    std::ifstream in(task.path() / "children");
    for (pid_t pid; in >> pid;) children.push_back(pid);
  }
  return children;
}

TEST(Service, ALocalWorkersDeathIsLoggedWithItsSignal) {
  testing::TempDir dir;
  Coordinator c(dir, 1);
  c.Start();
  std::vector<pid_t> workers;
  for (const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(10));
       workers.empty() && absl::Now() < deadline;) {
    workers = Children(c.process()->pid());
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(workers.size(), 1u);
  kill(workers[0], SIGKILL);
  const std::string expected = absl::StrCat("local worker ", workers[0], " was killed by signal 9");
  for (const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(10));
       c.process()->Log().find(expected) == std::string::npos && absl::Now() < deadline;) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_THAT(c.process()->Log(), HasSubstr(expected));
}

grpc::health::v1::HealthCheckResponse::ServingStatus Health(const std::string& address) {
  auto health = grpc::health::v1::Health::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  if (!health->Check(&context, request, &response).ok()) return grpc::health::v1::HealthCheckResponse::UNKNOWN;
  return response.status();
}

bool AwaitHealth(const std::string& address, grpc::health::v1::HealthCheckResponse::ServingStatus want) {
  for (const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(15)); absl::Now() < deadline;) {
    if (Health(address) == want) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return false;
}

// While another process holds the store's write lock, no job can be
// accepted, and health says so; it recovers when the lock goes.
TEST(Service, HealthIsNotServingWhileTheStoreCannotBeWritten) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  ASSERT_TRUE(AwaitHealth(c.client_address(), grpc::health::v1::HealthCheckResponse::SERVING));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((c.data_dir() + "/jobs.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_TRUE(AwaitHealth(c.client_address(), grpc::health::v1::HealthCheckResponse::NOT_SERVING));
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_TRUE(AwaitHealth(c.client_address(), grpc::health::v1::HealthCheckResponse::SERVING));
  EXPECT_THAT(c.process()->Log(), HasSubstr("the job store cannot be written"));
}

// A client that kept trying while no coordinator was there (one failed
// over, or not yet started) is served within about a second of one
// listening, when it waits on its channel (gRPC's wait_for_ready) rather
// than failing at once: the channel tries to connect at most a second
// apart (common/client_channel.cc). With gRPC's default backoff it was
// served 4.5-6.9 s after the coordinator came.
//
// The wait matters: a call that fails at once drives no I/O, so gRPC
// 1.51 notices the channel's new connection only on its backup poller's
// round, every 5 s. Calls that failed at once, 50 ms apart, were served
// up to 9.9 s after the coordinator came, 11 runs of 57 over 1.5 s (none
// of 10 with that poller's round at 100 ms).
TEST(Service, AClientWaitingOnItsChannelIsServedWithinASecondOfACoordinator) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  std::unique_ptr<v1::SolverService::Stub> client = testing::Dial(c.client_address());
  const auto waiting_probe = [&] {
    grpc::ClientContext context;
    context.set_wait_for_ready(true);
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Milliseconds(200)));
    v1::GetJobRequest request;
    request.set_job_id("probe");
    v1::Job job;
    return client->GetJob(&context, request, &job).error_code();
  };
  for (const absl::Time end = absl::Now() + absl::Seconds(10); absl::Now() < end;) {
    ASSERT_EQ(waiting_probe(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  c.Start();
  const absl::Time listening = absl::Now();
  while (waiting_probe() == grpc::StatusCode::DEADLINE_EXCEEDED && absl::Now() - listening < absl::Seconds(30)) {
  }
  const absl::Duration waited = absl::Now() - listening;
  EXPECT_EQ(waiting_probe(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LT(waited, testing::Scaled(absl::Milliseconds(1500)));
}

// A coordinator whose PostgreSQL goes away reports NOT_SERVING, and
// submits fail UNAVAILABLE (retry), not INTERNAL; when the database is
// back it serves again by itself, and nothing accepted before is lost.
TEST(Service, ACoordinatorRidesOutARestartOfItsDatabase) {
  testing::TempDir dir;
  testing::Postgres pg;
  ASSERT_TRUE(pg.ok()) << pg.status();
  Coordinator c(dir, 1, {"--store=" + pg.uri()});
  c.Start();
  ASSERT_TRUE(AwaitHealth(c.client_address(), grpc::health::v1::HealthCheckResponse::SERVING));
  const std::string before = Submit(c.stub(), SpecFor("8 1 3 4 0 2 7 6 5"))->id();
  ASSERT_TRUE(AwaitState(c.stub(), before, v1::JOB_STATE_DONE, absl::Seconds(30)).ok());

  ASSERT_TRUE(pg.Stop().ok());
  EXPECT_TRUE(AwaitHealth(c.client_address(), grpc::health::v1::HealthCheckResponse::NOT_SERVING));
  const absl::StatusOr<v1::Job> refused = Submit(c.stub(), SpecFor("8 6 7 2 5 4 3 0 1"));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();

  ASSERT_TRUE(pg.Start().ok());
  EXPECT_TRUE(AwaitHealth(c.client_address(), grpc::health::v1::HealthCheckResponse::SERVING));
  const absl::StatusOr<v1::Job> after = Submit(c.stub(), SpecFor("8 6 7 2 5 4 3 0 1"));
  ASSERT_TRUE(after.ok()) << after.status();
  const absl::StatusOr<v1::Job> done = AwaitState(c.stub(), after->id(), v1::JOB_STATE_DONE, absl::Seconds(30));
  ASSERT_TRUE(done.ok()) << done.status() << "\n" << c.process()->Log();
  EXPECT_EQ(done->result().length(), 31);
  EXPECT_EQ(GetJob(c.stub(), before)->result().length(), 14);
}

// Two coordinators on one PostgreSQL database: the second, --standby,
// waits while the first has the database, serving only its probes (alive,
// not ready) and metrics; killed with -9, the first loses nothing: the
// standby takes over within seconds and finishes every job it had, queued
// or running, each exactly once. A third, standing by for it in turn,
// stops at once on SIGTERM.
TEST(Service, AStandbyCoordinatorTakesOverWhenTheActiveOneIsKilled) {
  testing::TempDir dir_a, dir_b, dir_c;
  testing::Postgres pg;
  ASSERT_TRUE(pg.ok()) << pg.status();
  Coordinator a(dir_a, 1, {"--store=" + pg.uri()});
  a.Start();
  const int b_metrics = testing::FreePort();
  Coordinator b(dir_b, 1, {"--store=" + pg.uri(), "--standby", absl::StrCat("--metrics-listen=127.0.0.1:", b_metrics)});
  b.Launch();
  std::vector<std::pair<std::string, int>> jobs;  // id, length
  for (int i = 0; i < 10; ++i) jobs.emplace_back(Submit(a.stub(), SpecFor("8 1 3 4 0 2 7 6 5"))->id(), 14);
  for (const auto& [id, length] : jobs)
    ASSERT_TRUE(AwaitState(a.stub(), id, v1::JOB_STATE_DONE, absl::Seconds(30)).ok());
  // Running when the first goes, and queued behind it.
  jobs.emplace_back(Submit(a.stub(), SpecFor(kKorf3, "blank-first", "idastar"))->id(), kKorf3Length);
  jobs.emplace_back(Submit(a.stub(), SpecFor(kKorf4, "blank-first", "idastar"))->id(), kKorf4Length);
  ASSERT_TRUE(AwaitStoredState(a.stub(), jobs[10].first, v1::JOB_STATE_RUNNING, absl::Seconds(10)).ok());
  EXPECT_TRUE(testing::Eventually(absl::Seconds(10), [&] {
    return absl::StrContains(b.process()->Log(), "standing by");
  })) << b.process()->Log();
  EXPECT_FALSE(std::filesystem::exists(dir_b.path() + "/ports")) << "a standby serves clients";
  EXPECT_EQ(testing::HttpGet("127.0.0.1", b_metrics, "/healthz")->code, 200);
  EXPECT_EQ(testing::HttpGet("127.0.0.1", b_metrics, "/readyz")->code, 503);
  const std::string standing_by = testing::HttpGet("127.0.0.1", b_metrics, "/metrics")->body;
  EXPECT_THAT(standing_by, HasSubstr("\nnpuzzle_coordinator_standing_by 1\n"));
  std::ifstream operations(std::string(NPUZZLE_SOURCE_DIR) + "/docs/operations.md");
  EXPECT_THAT(std::string(std::istreambuf_iterator<char>(operations), {}),
              HasSubstr("`npuzzle_coordinator_standing_by`"));

  const absl::Time killed = absl::Now();
  a.process()->Signal(SIGKILL);
  ASSERT_EQ(a.process()->Wait(absl::Seconds(5)), -1);
  ASSERT_TRUE(b.AwaitReady(testing::Scaled(absl::Seconds(20)))) << b.process()->Log();
  const absl::Duration takeover = absl::Now() - killed;
  EXPECT_LT(takeover, testing::Scaled(absl::Seconds(10))) << "the standby took " << takeover;
  EXPECT_THAT(b.process()->Log(), HasSubstr("taking over"));
  EXPECT_EQ(testing::HttpGet("127.0.0.1", b_metrics, "/readyz")->code, 200);
  const std::string active = testing::HttpGet("127.0.0.1", b_metrics, "/metrics")->body;
  EXPECT_THAT(active, HasSubstr("\nnpuzzle_coordinator_standing_by 0\n"));
  EXPECT_THAT(active, HasSubstr("npuzzle_jobs_submitted_total"));

  // A standby of the standby that took over.
  Coordinator c(dir_c, 0, {"--store=" + pg.uri(), "--standby"});
  c.Launch();
  EXPECT_TRUE(testing::Eventually(absl::Seconds(10), [&] {
    return absl::StrContains(c.process()->Log(), "standing by");
  })) << c.process()->Log();
  c.process()->Signal(SIGTERM);
  EXPECT_EQ(c.process()->Wait(testing::Scaled(absl::Seconds(2))), 0) << c.process()->Log();

  for (const auto& [id, length] : jobs) {
    const testing::Watched w = WatchToEnd(b.stub(), id, absl::Seconds(90));
    EXPECT_TRUE(w.status.ok()) << w.status.error_message() << "\n" << b.process()->Log();
    ASSERT_EQ(w.finals(), 1) << id;
    EXPECT_EQ(w.final_job()->state(), v1::JOB_STATE_DONE) << w.final_job()->error();
    EXPECT_EQ(w.final_job()->result().length(), length);
    testing::ExpectReplays(*w.final_job());
  }
}

// A standby told where other coordinators reach it (--advertise-host)
// forwards its client, worker and HTTP ports to the active coordinator's,
// and is ready: every replica behind a load balancer serves. A worker and
// a client that know only the standby's address are served by the active
// one; when that is killed with -9 the standby takes over on the same
// ports, the worker reconnects and keeps its job, and the client, dialing
// the same address again, sees it end exactly once.
TEST(Service, AStandbyForwardsToTheActiveCoordinatorAndTakesOverOnTheSamePorts) {
  testing::TempDir dir_a, dir_b, dir_w;
  testing::Postgres pg;
  ASSERT_TRUE(pg.ok()) << pg.status();
  Coordinator a(dir_a, 0, {"--store=" + pg.uri(), "--advertise-host=127.0.0.1"});
  a.Start();
  const int b_metrics = testing::FreePort();
  const int b_http = testing::FreePort();
  Coordinator b(
      dir_b, 0,
      {"--store=" + pg.uri(), "--standby", "--advertise-host=127.0.0.1",
       absl::StrCat("--metrics-listen=127.0.0.1:", b_metrics), absl::StrCat("--http-listen=127.0.0.1:", b_http)});
  b.Launch();
  ASSERT_TRUE(testing::Eventually(absl::Seconds(10), [&] {
    const absl::StatusOr<testing::HttpResponse> ready = testing::HttpGet("127.0.0.1", b_metrics, "/readyz");
    return ready.ok() && ready->code == 200;
  })) << b.process()->Log();
  EXPECT_THAT(b.process()->Log(), HasSubstr("forwarding to the active coordinator"));

  std::unique_ptr<testing::Process> worker = testing::StartWorker(b, dir_w, "w1");
  std::unique_ptr<v1::SolverService::Stub> via_b = testing::Dial(b.client_address());
  const absl::StatusOr<v1::Job> quick = Submit(*via_b, SpecFor("8 1 3 4 0 2 7 6 5"));
  ASSERT_TRUE(quick.ok()) << quick.status();
  const absl::StatusOr<v1::Job> quick_done = AwaitState(*via_b, quick->id(), v1::JOB_STATE_DONE, absl::Seconds(30));
  ASSERT_TRUE(quick_done.ok()) << quick_done.status() << "\n" << a.process()->Log();
  EXPECT_EQ(quick_done->result().length(), 14);
  EXPECT_EQ(GetJob(a.stub(), quick->id())->state(), v1::JOB_STATE_DONE) << "not the active coordinator's job";
  const absl::StatusOr<testing::HttpResponse> page = testing::HttpGet("127.0.0.1", b_http, "/v1/jobs/" + quick->id());
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->code, 200) << page->body;
  EXPECT_THAT(page->body, HasSubstr(quick->id()));

  const std::string id = Submit(*via_b, SpecFor(kKorf4, "blank-first", "idastar"))->id();
  ASSERT_TRUE(AwaitStoredState(*via_b, id, v1::JOB_STATE_RUNNING, absl::Seconds(10)).ok());
  a.process()->Signal(SIGKILL);
  ASSERT_EQ(a.process()->Wait(absl::Seconds(5)), -1);
  ASSERT_TRUE(b.AwaitReady(testing::Scaled(absl::Seconds(20)))) << b.process()->Log();
  EXPECT_THAT(b.process()->Log(), HasSubstr("taking over"));
  const testing::Watched w = WatchToEnd(*testing::Dial(b.client_address()), id, absl::Seconds(90));
  EXPECT_TRUE(w.status.ok()) << w.status.error_message() << "\n" << b.process()->Log();
  ASSERT_EQ(w.finals(), 1) << b.process()->Log();
  EXPECT_EQ(w.final_job()->state(), v1::JOB_STATE_DONE) << w.final_job()->error();
  EXPECT_EQ(w.final_job()->result().length(), kKorf4Length);
  EXPECT_EQ(w.final_job()->lost_attempts(), 0) << "the worker lost its job in the takeover";
  testing::ExpectReplays(*w.final_job());

  // A standby's readiness follows the database: it cannot know where to
  // forward while the database is down.
  testing::TempDir dir_c;
  const int c_metrics = testing::FreePort();
  Coordinator c(dir_c, 0,
                {"--store=" + pg.uri(), "--standby", "--advertise-host=127.0.0.1",
                 absl::StrCat("--metrics-listen=127.0.0.1:", c_metrics)});
  c.Launch();
  const auto ready = [&](int port, int code) {
    return testing::Eventually(absl::Seconds(10), [&] {
      const absl::StatusOr<testing::HttpResponse> got = testing::HttpGet("127.0.0.1", port, "/readyz");
      return got.ok() && got->code == code;
    });
  };
  ASSERT_TRUE(ready(c_metrics, 200)) << c.process()->Log();
  ASSERT_TRUE(pg.Stop().ok());
  EXPECT_TRUE(ready(c_metrics, 503)) << c.process()->Log();
  EXPECT_TRUE(ready(b_metrics, 503)) << b.process()->Log();
  ASSERT_TRUE(pg.Start().ok());
  // The active coordinator takes its lock back, as the standby leaves it
  // a moment to: a database restart is no failover.
  EXPECT_TRUE(ready(b_metrics, 200)) << b.process()->Log();
  EXPECT_TRUE(ready(c_metrics, 200)) << c.process()->Log();
  EXPECT_TRUE(b.process()->Running());
  EXPECT_THAT(c.process()->Log(), Not(HasSubstr("taking over")));
}

// An active coordinator cut off from the database (its sessions ended by
// the database, as a network partition would) loses its lock to the
// standby; when it reconnects and finds the database taken it stops rather
// than run beside it, and the standby finishes the jobs.
TEST(Service, ACoordinatorThatLostTheDatabaseToTheStandbyStops) {
  testing::TempDir dir_a, dir_b;
  testing::Postgres pg;
  ASSERT_TRUE(pg.ok()) << pg.status();
  // Each its own database user, so that one can be cut off alone.
  pg.Sql("CREATE ROLE a LOGIN SUPERUSER");
  pg.Sql("CREATE ROLE b LOGIN SUPERUSER");
  const auto as = [&](const std::string& user) {
    return "--store=" + absl::StrReplaceAll(pg.uri(), {{"user=npuzzle", "user=" + user}});
  };
  Coordinator a(dir_a, 1, {as("a")});
  a.Start();
  Coordinator b(dir_b, 1, {as("b"), "--standby"});
  b.Launch();
  const std::string id = Submit(a.stub(), SpecFor(kKorf4, "blank-first", "idastar"))->id();
  ASSERT_TRUE(testing::Eventually(absl::Seconds(10), [&] {
    return absl::StrContains(b.process()->Log(), "standing by");
  })) << b.process()->Log();

  // Cut off: its sessions ended, and no new one let in until the standby
  // has the database.
  pg.Sql("ALTER ROLE a NOLOGIN");
  pg.Sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'a'");
  ASSERT_TRUE(b.AwaitReady(testing::Scaled(absl::Seconds(20)))) << b.process()->Log();
  pg.Sql("ALTER ROLE a LOGIN");
  EXPECT_EQ(a.process()->Wait(testing::Scaled(absl::Seconds(15))), 0) << a.process()->Log();
  EXPECT_THAT(a.process()->Log(), HasSubstr("another coordinator has this PostgreSQL database"));
  EXPECT_THAT(a.process()->Log(), HasSubstr("to take over when it goes): stopping"));
  const testing::Watched w = WatchToEnd(b.stub(), id, absl::Seconds(90));
  ASSERT_EQ(w.finals(), 1) << b.process()->Log();
  EXPECT_EQ(w.final_job()->state(), v1::JOB_STATE_DONE) << w.final_job()->error();
  EXPECT_EQ(w.final_job()->result().length(), kKorf4Length);
}

// Waits until the job is gone; false if it is still there after 10 s.
bool AwaitDeleted(v1::SolverService::Stub& stub, const std::string& id) {
  const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(10));
  while (GetJob(stub, id).ok() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(50));
  return GetJob(stub, id).status().code() == absl::StatusCode::kNotFound;
}

// Fills the file system `dir` is on: false if it could not.
bool FillUp(const std::string& dir) {
  const int fd = open((dir + "/filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  static const std::string block(64 * 1024, 'x');
  while (write(fd, block.data(), block.size()) > 0) {
  }
  for (char byte = 'x'; write(fd, &byte, 1) == 1;) {
  }
  const bool full = errno == ENOSPC;
  close(fd);
  return full;
}

// The store on a real full disk: a small tmpfs of its own, in a mount
// namespace of this test's (so it needs root, as CI runs). While the disk
// is full, submits fail UNAVAILABLE saying so, health is NOT_SERVING, the
// error is logged once, and a waiting job's attempts do not climb; once
// space is back the service recovers by itself and runs the job.
TEST(Service, AFullDiskIsRiddenOutAndLeftBehind) {
  testing::TempDir dir;
  const std::string data = dir.path() + "/data";
  std::filesystem::create_directories(data);
  ASSERT_EQ(unshare(CLONE_NEWNS), 0) << "needs root (CAP_SYS_ADMIN): " << strerror(errno);
  ASSERT_EQ(mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0) << strerror(errno);
  ASSERT_EQ(mount("tmpfs", data.c_str(), "tmpfs", 0, "size=4m"), 0) << strerror(errno);
  Coordinator c(dir, 0);
  c.Start();
  const std::string before = Submit(c.stub(), SpecFor("8 1 3 4 0 2 7 6 5"))->id();
  ASSERT_TRUE(FillUp(data));

  absl::Status refused;
  for (int i = 0; i < 50 && refused.ok(); ++i) refused = Submit(c.stub(), SpecFor("8 1 3 4 0 2 7 6 5")).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("full"));
  EXPECT_TRUE(AwaitHealth(c.client_address(), grpc::health::v1::HealthCheckResponse::NOT_SERVING));
  auto worker = StartWorker(c, dir, "w");
  absl::SleepFor(absl::Seconds(5));
  absl::StatusOr<v1::Job> waiting = GetJob(c.stub(), before);
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_LE(waiting->attempt(), 2) << "attempts climbed while the store could not record them";
  EXPECT_NE(waiting->state(), v1::JOB_STATE_FAILED);

  std::filesystem::remove(data + "/filler");
  EXPECT_TRUE(AwaitHealth(c.client_address(), grpc::health::v1::HealthCheckResponse::SERVING));
  absl::StatusOr<v1::Job> done = AwaitState(c.stub(), before, v1::JOB_STATE_DONE, absl::Seconds(30));
  EXPECT_TRUE(done.ok()) << done.status();
  absl::StatusOr<v1::Job> after = Submit(c.stub(), SpecFor("8 1 3 4 0 2 7 6 5"));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(AwaitState(c.stub(), after->id(), v1::JOB_STATE_DONE, absl::Seconds(30)).ok());
  const std::string log = c.process()->Log();
  size_t reports = 0;
  for (size_t at = 0; (at = log.find("the job store cannot be written", at)) != std::string::npos; ++at) ++reports;
  EXPECT_EQ(reports, 1u) << "the episode should be logged once:\n" << log;
}

// With --retain-finished, a finished job is gone once that long past its
// end (GetJob: NOT_FOUND), even one that asked to be kept longer, and a
// running one stays however old it gets.
TEST(Service, FinishedJobsAreDeletedAfterTheRetention) {
  testing::TempDir dir;
  Coordinator c(dir, 1, {"--retain-finished=1s"});
  c.Start();
  v1::JobSpec keep_me = SpecFor("8 1 3 4 0 2 7 6 5");
  keep_me.set_retain_seconds(3600);
  const std::string done = Submit(c.stub(), keep_me)->id();
  ASSERT_TRUE(AwaitState(c.stub(), done, v1::JOB_STATE_DONE, absl::Seconds(10)).ok());
  const std::string running = Submit(c.stub(), SpecFor(kKorf1, "blank-first", "idastar", "misplaced"))->id();
  EXPECT_TRUE(AwaitDeleted(c.stub(), done));
  EXPECT_THAT(c.process()->Log(), HasSubstr("retention: deleted 1 finished jobs past their retention"));
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(GetJob(c.stub(), running)->state(), v1::JOB_STATE_RUNNING);
  v1::Job cancelled;
  EXPECT_TRUE(Cancel(c.stub(), running, &cancelled).ok());
}

// A job's own retain_seconds holds where the server keeps everything
// (--retain-finished 0), and a job without one is kept.
TEST(Service, AJobsOwnRetentionEndsItOnAServerThatKeepsEverything) {
  testing::TempDir dir;
  Coordinator c(dir, 1, {"--retain-finished=0"});
  c.Start();
  v1::JobSpec short_lived = SpecFor("8 1 3 4 0 2 7 6 5");
  short_lived.set_retain_seconds(1);
  const std::string brief = Submit(c.stub(), short_lived)->id();
  const std::string kept = Submit(c.stub(), SpecFor("8 1 3 4 0 2 7 6 5"))->id();
  ASSERT_TRUE(AwaitState(c.stub(), brief, v1::JOB_STATE_DONE, absl::Seconds(10)).ok());
  ASSERT_TRUE(AwaitState(c.stub(), kept, v1::JOB_STATE_DONE, absl::Seconds(10)).ok());
  EXPECT_TRUE(AwaitDeleted(c.stub(), brief));
  EXPECT_TRUE(GetJob(c.stub(), kept).ok());
  short_lived.set_retain_seconds(kMaxRetainSeconds + 1);
  const absl::Status refused = Submit(c.stub(), short_lived).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("retain_seconds"));
}

// The soak's short version (bench/service_bench --soak_minutes): jobs at
// full rate with a 2 s retention. Once the first jobs expire the store
// holds about a retention's worth, so its size on disk stops growing,
// where without retention it grew by a few hundred bytes a job.
TEST(Service, AtFullRateWithAShortRetentionTheStoreStopsGrowing) {
  testing::TempDir dir;
  Coordinator c(dir, 2, {"--retain-finished=2s"});
  c.Start();
  const Board goal = *GoalPreset("standard", 3, 3);
  std::atomic<bool> stop = false;
  std::atomic<int> done = 0;
  std::vector<std::thread> clients;
  for (int k = 0; k < 8; ++k) {
    clients.emplace_back([&, k] {
      auto stub =
          v1::SolverService::NewStub(grpc::CreateChannel(c.client_address(), grpc::InsecureChannelCredentials()));
      std::mt19937_64 rng(k);
      while (!stop) {
        v1::JobSpec spec;
        *spec.mutable_start() = BoardToProto(RandomWalk(goal, 8, rng));
        const std::string id = Submit(*stub, spec)->id();
        if (WatchToEnd(*stub, id, absl::Seconds(30)).finals() == 1) ++done;
      }
    });
  }
  auto store_bytes = [&] {
    return std::filesystem::file_size(c.data_dir() + "/jobs.db") +
           std::filesystem::file_size(c.data_dir() + "/jobs.db-wal");
  };
  absl::SleepFor(absl::Seconds(8));  // four retentions: the first jobs are long gone
  const uintmax_t settled = store_bytes();
  const int done_settled = done;
  uintmax_t largest = settled;
  for (int i = 0; i < 8; ++i) {
    absl::SleepFor(absl::Seconds(1));
    largest = std::max(largest, store_bytes());
  }
  stop = true;
  for (std::thread& t : clients) t.join();
  const int jobs_since = done - done_settled;
  ASSERT_GT(jobs_since, 200) << "too few jobs to tell";
  EXPECT_LT(largest, settled * 3 / 2) << "from " << settled << " bytes, after " << jobs_since << " more jobs";
  EXPECT_LT(largest - std::min(largest, settled), static_cast<uintmax_t>(jobs_since) * 100)
      << "the store grew with the jobs";
}

// RetryJob runs a job stopped by its node limit again, as a new job that
// links back to it, with the limits the retry gives; by gRPC and by HTTP,
// once per request id. A job that ended with its answer is refused, and a
// submission may not claim to be a retry.
TEST(Service, ALimitStoppedJobIsRetriedAsANewLinkedJob) {
  testing::TempDir dir;
  Coordinator c(dir, 1);
  c.Start();
  v1::JobSpec spec = SpecFor("8 6 7 2 5 4 3 0 1", "standard", "bfs", "");
  spec.mutable_limits()->set_max_nodes(100);
  const std::string old = Submit(c.stub(), spec)->id();
  absl::StatusOr<v1::Job> stopped = AwaitState(c.stub(), old, v1::JOB_STATE_DONE, absl::Seconds(10));
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_EQ(stopped->result().status(), "node_limit");

  v1::RetryJobRequest request;
  request.set_job_id(old);
  request.set_request_id("retry-once");
  request.mutable_limits()->set_max_nodes(10000000);
  auto retry = [&](const v1::RetryJobRequest& r) -> absl::StatusOr<v1::Job> {
    grpc::ClientContext context;
    v1::Job job;
    const grpc::Status s = c.stub().RetryJob(&context, r, &job);
    if (!s.ok()) return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
    return job;
  };
  absl::StatusOr<v1::Job> again = retry(request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NE(again->id(), old);
  EXPECT_EQ(again->spec().retry_of(), old);
  EXPECT_EQ(retry(request)->id(), again->id()) << "the same request id names the same retry";
  absl::StatusOr<v1::Job> solved = AwaitState(c.stub(), again->id(), v1::JOB_STATE_DONE, absl::Seconds(30));
  ASSERT_TRUE(solved.ok()) << solved.status();
  EXPECT_EQ(solved->result().status(), "solved");
  EXPECT_EQ(solved->result().length(), 31);
  EXPECT_EQ(GetJob(c.stub(), old)->result().status(), "node_limit") << "the old job is left as it ended";

  request.set_job_id(again->id());
  request.set_request_id("");
  const absl::Status refused = retry(request).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("ended with its answer (solved)"));

  // By HTTP: the body is optional.
  absl::StatusOr<testing::HttpResponse> http =
      testing::HttpRequest("127.0.0.1", c.http_port(), "POST", absl::StrCat("/v1/jobs/", old, ":retry"));
  ASSERT_TRUE(http.ok()) << http.status();
  EXPECT_EQ(http->code, 200) << http->body;
  EXPECT_THAT(http->body, HasSubstr(absl::StrCat("\"retryOf\":\"", old, "\"")));

  spec.set_retry_of(old);
  const absl::Status claimed = Submit(c.stub(), spec).status();
  EXPECT_EQ(claimed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(claimed.message(), HasSubstr("retry_of is set by RetryJob"));
}

// Waiting jobs say where they stand, and a running IDA* job says how far
// through its threshold it is, through the API as the CLI's get shows it.
TEST(Service, QueuedJobsShowTheirPlaceAndRunningOnesTheirEstimate) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(Submit(c.stub(), SpecFor(kKorf1, "blank-first", "idastar", "misplaced"))->id());
  v1::JobSpec urgent = SpecFor("8 1 3 4 0 2 7 6 5");
  urgent.set_priority(5);
  const std::string first = Submit(c.stub(), urgent)->id();
  EXPECT_EQ(GetJob(c.stub(), first)->queue_position(), 1);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(GetJob(c.stub(), ids[i])->queue_position(), i + 2);
  auto worker = StartWorker(c, dir, "w");
  ASSERT_TRUE(AwaitState(c.stub(), ids[0], v1::JOB_STATE_RUNNING, absl::Seconds(10)).ok());
  EXPECT_EQ(GetJob(c.stub(), ids[1])->queue_position(), 1);
  const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(20));
  absl::StatusOr<v1::Job> running;
  while (absl::Now() < deadline) {
    running = GetJob(c.stub(), ids[0]);
    if (running.ok() && running->progress().has_fraction_done()) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(running.ok());
  EXPECT_TRUE(running->progress().has_fraction_done()) << running->ShortDebugString();
  EXPECT_EQ(running->queue_position(), 0);
  for (const std::string& id : ids) {
    v1::Job cancelled;
    Cancel(c.stub(), id, &cancelled);
  }
}

// A worker given the client port, or an address where nothing listens,
// says so rather than waiting without a word.
TEST(Service, AWorkerDiallingTheWrongPortSaysSo) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  for (const auto& [address, expected] :
       {std::pair{c.client_address(), "is it the client port? Workers dial the server's --worker-listen port"},
        std::pair{std::string("127.0.0.1:1"), "nothing listens there: is the coordinator running?"}}) {
    testing::Process worker(
        {absl::StrCat(NPUZZLE_BIN_DIR, "/npuzzle-worker"), "--coordinator=" + address, "--metrics-listen="},
        absl::StrCat(dir.path(), "/worker-", address.substr(address.rfind(':') + 1), ".log"));
    EXPECT_TRUE(testing::Eventually(absl::Seconds(10), [&] { return absl::StrContains(worker.Log(), expected); }))
        << worker.Log();
  }
}

TEST(Service, KilledWorkersJobFinishesOnAnotherWorker) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  auto a = StartWorker(c, dir, "a");
  auto b = StartWorker(c, dir, "b");
  const std::string id = Submit(c.stub(), SpecFor(kKorf3, "blank-first", "idastar"))->id();
  absl::StatusOr<v1::Job> job = AwaitState(c.stub(), id, v1::JOB_STATE_RUNNING, absl::Seconds(10));
  ASSERT_TRUE(job.ok()) << job.status();
  absl::SleepFor(absl::Milliseconds(500));  // mid-search
  auto& victim = job->worker_id() == "a" ? a : b;
  const std::string survivor = job->worker_id() == "a" ? "b" : "a";
  victim->Signal(SIGKILL);

  const testing::Watched w = WatchToEnd(c.stub(), id, absl::Seconds(60));
  ASSERT_EQ(w.finals(), 1);
  const v1::Job& done = *w.final_job();
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result().length(), kKorf3Length);
  EXPECT_EQ(done.worker_id(), survivor);
  EXPECT_EQ(done.attempt(), 2);
  EXPECT_EQ(done.lost_attempts(), 1);
  testing::ExpectReplays(done);
}

// Two worker processes started with one id: the second is refused and says
// why, on both sides, and the first keeps its job to the end.
TEST(Service, ASecondWorkerWithATakenIdIsRefusedAndSaysWhy) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  auto first = StartWorker(c, dir, "twin");
  const std::string id = Submit(c.stub(), SpecFor(kKorf4, "blank-first", "idastar"))->id();
  ASSERT_TRUE(AwaitState(c.stub(), id, v1::JOB_STATE_RUNNING, absl::Seconds(10)).ok());
  auto second = StartWorker(c, dir, "twin");
  const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(10));
  while (second->Log().find("is in use by a worker on") == std::string::npos && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_THAT(second->Log(), HasSubstr("worker id 'twin' is in use by a worker on"));
  EXPECT_THAT(c.process()->Log(), HasSubstr("refused worker from"));
  const testing::Watched w = WatchToEnd(c.stub(), id, absl::Seconds(60));
  ASSERT_EQ(w.finals(), 1);
  EXPECT_EQ(w.final_job()->state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(w.final_job()->result().length(), kKorf4Length);
  EXPECT_EQ(w.final_job()->attempt(), 1);
  EXPECT_EQ(w.final_job()->lost_attempts(), 0);
}

// Polls a running job's stored checkpoint until `reached` holds for it;
// the last one seen. Fails the test if the job finishes first.
v1::Checkpoint AwaitCheckpoint(v1::SolverService::Stub& stub, const std::string& id,
                               const std::function<bool(const v1::Checkpoint&)>& reached) {
  v1::Checkpoint stored;
  const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(60));
  while (!reached(stored) && absl::Now() < deadline) {
    absl::StatusOr<v1::Job> job = GetJob(stub, id);
    EXPECT_TRUE(job.ok()) << job.status();
    if (!job.ok()) break;
    EXPECT_NE(job->state(), v1::JOB_STATE_DONE) << "finished before the kill";
    stored = job->checkpoint();
    absl::SleepFor(absl::Milliseconds(5));
  }
  return stored;
}

// Kills worker `a` and lets a worker "b" finish the job, which must end
// once and solved; the job as it ended.
v1::Job KillAndFinishElsewhere(Coordinator& c, const testing::TempDir& dir, testing::Process& a,
                               const std::string& id) {
  a.Signal(SIGKILL);
  auto b = StartWorker(c, dir, "b");
  const testing::Watched w = WatchToEnd(c.stub(), id, absl::Seconds(120));
  EXPECT_EQ(w.finals(), 1);
  if (w.final_job() == nullptr) return {};
  const v1::Job done = *w.final_job();
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE);
  EXPECT_TRUE(done.result().optimal());
  EXPECT_EQ(done.worker_id(), "b");
  EXPECT_EQ(done.attempt(), 2);
  EXPECT_EQ(done.lost_attempts(), 1);
  testing::ExpectReplays(done);
  return done;
}

// An IDA* job whose worker is killed after some thresholds finished goes on
// from the last one stored on another worker, and still answers the
// optimal length, once. Korf's first instance with Manhattan distance runs
// nine thresholds (41 to 57), each several times the one before.
TEST(Service, KilledWorkersIdaStarJobResumesAtItsCheckpoint) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  auto a = StartWorker(c, dir, "a");
  v1::JobSpec spec = SpecFor("14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3", "blank-first", "idastar", "manhattan");
  spec.set_threads(1);
  const std::string id = Submit(c.stub(), spec)->id();
  const int bound = AwaitCheckpoint(c.stub(), id, [](const v1::Checkpoint& c) { return c.bound() >= 55; }).bound();
  ASSERT_GE(bound, 55);
  const v1::Job done = KillAndFinishElsewhere(c, dir, *a, id);
  EXPECT_EQ(done.result().length(), 57);
  // b started at the stored threshold (or a later one, had a's last
  // checkpoint landed after the poll), and the counts span both attempts.
  EXPECT_GE(done.result().stats().resumed_from_bound(), bound);
  EXPECT_EQ(done.result().stats().iterations(), 9);
  EXPECT_GE(done.result().stats().expanded(), done.checkpoint().expanded());
}

// Korf's instance 17 (66 moves), about three seconds over two workers.
constexpr char kKorf17[] = "15 14 0 4 11 1 6 13 7 5 8 9 3 2 10 12";
constexpr int kKorf17Length = 66;

// Killed mid-threshold, the job loses only the subtrees under way: the
// subtrees of the threshold that the killed worker had stored are skipped
// by the next, and the answer is still the optimal one. Korf's instance
// 17 with Manhattan distance on one thread, killed in its last threshold
// (66), which takes seconds, is split into thousands of subtrees and finds
// its answer after some 3,600 of them.
TEST(Service, AJobKilledMidThresholdSkipsTheSubtreesItStored) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  auto a = StartWorker(c, dir, "a", {"--checkpoint-interval-ms=50"});
  v1::JobSpec spec = SpecFor(kKorf17, "blank-first", "idastar", "manhattan");
  spec.set_threads(1);
  const std::string id = Submit(c.stub(), spec)->id();
  auto subtrees_done = [](const v1::Checkpoint& c) {
    int n = 0;
    for (const char byte : c.subtrees_done()) n += std::popcount(static_cast<unsigned char>(byte));
    return n;
  };
  const v1::Checkpoint stored = AwaitCheckpoint(
      c.stub(), id, [&](const v1::Checkpoint& c) { return c.bound() == kKorf17Length && subtrees_done(c) >= 20; });
  ASSERT_EQ(stored.bound(), kKorf17Length);
  ASSERT_GE(subtrees_done(stored), 20);
  const v1::Job done = KillAndFinishElsewhere(c, dir, *a, id);
  EXPECT_EQ(done.result().length(), kKorf17Length);
  EXPECT_EQ(done.result().stats().resumed_from_bound(), kKorf17Length);
  // At least those seen (more, had a later checkpoint landed before the kill).
  EXPECT_GE(done.result().stats().resumed_subtrees(), subtrees_done(stored));
  EXPECT_GE(done.result().stats().generated(), stored.generated());
}

// Waits until the split job is in the middle of a threshold of at least
// `bound`: units done, and units still out.
absl::StatusOr<v1::Job> AwaitMidThreshold(v1::SolverService::Stub& stub, const std::string& id, int bound) {
  const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(60));
  while (absl::Now() < deadline) {
    absl::StatusOr<v1::Job> job = GetJob(stub, id);
    if (!job.ok()) return job;
    if (job->state() != v1::JOB_STATE_QUEUED && job->state() != v1::JOB_STATE_RUNNING) {
      return absl::FailedPreconditionError("the job ended first");
    }
    const v1::Progress& p = job->progress();
    if (p.bound() >= bound && p.units_done() > 0 && p.units_done() < p.units_total()) return job;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return absl::DeadlineExceededError("no threshold that far");
}

// One job over three worker processes; one is killed with SIGKILL in the
// middle of a threshold. Its units go to the others, and the job still
// answers the optimal length, once, having used all three.
TEST(Service, SplitJobSurvivesAWorkerKilledMidThreshold) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  std::vector<std::unique_ptr<testing::Process>> workers;
  for (const char* id : {"a", "b", "c"}) workers.push_back(StartWorker(c, dir, id, {"--max-search-threads=1"}));
  v1::JobSpec spec = SpecFor(kKorf17, "blank-first", "idastar", "manhattan");
  spec.set_max_workers(3);
  const std::string id = Submit(c.stub(), spec)->id();
  absl::StatusOr<v1::Job> mid = AwaitMidThreshold(c.stub(), id, 60);
  ASSERT_TRUE(mid.ok()) << mid.status();
  EXPECT_EQ(mid->progress().workers(), 3);
  workers[1]->Signal(SIGKILL);

  const testing::Watched w = WatchToEnd(c.stub(), id, absl::Seconds(120));
  ASSERT_EQ(w.finals(), 1);
  const v1::Job& done = *w.final_job();
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE) << done.error();
  EXPECT_EQ(done.result().length(), kKorf17Length);
  EXPECT_TRUE(done.result().optimal());
  EXPECT_EQ(done.result().stats().workers(), 3);
  EXPECT_GT(done.result().stats().work_units(), 100);
  EXPECT_EQ(done.lost_attempts(), 0);
  EXPECT_EQ(done.attempt(), 1);
  testing::ExpectReplays(done);
  bool units_seen = false;
  for (const v1::JobEvent& e : w.events) units_seen |= e.has_progress() && e.progress().units_total() > 0;
  EXPECT_TRUE(units_seen);
}

// The worker's side of a hand back, against a coordinator played here. A
// unit (all of a Korf instance, at a threshold below its solution) is asked
// for part of itself back at its first progress report. The worker hands
// back subtrees below it and lists them again with its result; searched
// here, they and the result expand exactly the nodes the whole unit does,
// and see the same least f beyond the threshold.
TEST(Service, AWorkerHandsBackPartOfAUnitWhenAsked) {
  class PlayedCoordinator final : public v1::WorkerService::Service {
   public:
    explicit PlayedCoordinator(v1::Assignment unit) : unit_(std::move(unit)) {}
    grpc::Status Connect(grpc::ServerContext*,
                         grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::WorkerMessage>* stream) override {
      v1::WorkerMessage m;
      if (!stream->Read(&m) || !m.has_hello()) return grpc::Status::OK;
      v1::CoordinatorMessage out;
      *out.mutable_assign() = unit_;
      stream->Write(out);
      bool asked = false;
      while (stream->Read(&m)) {
        if (m.has_progress() && !asked) {
          asked = true;
          out.mutable_hand_back()->set_job_id(unit_.job_id());
          out.mutable_hand_back()->set_unit_id(unit_.unit().id());
          out.mutable_hand_back()->set_attempt(unit_.attempt());
          stream->Write(out);
        }
        absl::MutexLock lock(&mu_);
        if (m.has_handed_back()) {
          handed_back_.insert(handed_back_.end(), m.handed_back().prefixes().begin(), m.handed_back().prefixes().end());
        }
        if (m.has_finished() && !finished_) finished_ = m.finished();
      }
      return grpc::Status::OK;
    }
    std::optional<v1::JobFinished> Await(absl::Duration timeout) {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(
                               +[](std::optional<v1::JobFinished>* f) { return f->has_value(); }, &finished_),
                           timeout);
      return finished_;
    }
    std::vector<std::string> handed_back() {
      absl::MutexLock lock(&mu_);
      return handed_back_;
    }

   private:
    const v1::Assignment unit_;
    absl::Mutex mu_;
    std::vector<std::string> handed_back_ ABSL_GUARDED_BY(mu_);
    std::optional<v1::JobFinished> finished_ ABSL_GUARDED_BY(mu_);
  };

  const int bound = kKorf17Length - 4;
  v1::Assignment unit;
  unit.set_job_id("job-played");
  unit.mutable_unit()->set_id(1);
  unit.set_attempt(1);
  *unit.mutable_spec() = SpecFor(kKorf17, "blank-first", "idastar", "manhattan");
  unit.mutable_unit()->set_bound(bound);
  PlayedCoordinator coordinator(unit);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&coordinator);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_GT(port, 0);
  testing::TempDir dir;
  {
    testing::Process worker(
        {absl::StrCat(NPUZZLE_BIN_DIR, "/npuzzle-worker"), absl::StrCat("--coordinator=127.0.0.1:", port),
         "--worker-id=w", absl::StrCat("--data-dir=", dir.path()), "--progress-interval-ms=20", "--metrics-listen="},
        dir.path() + "/worker.log");
    const std::optional<v1::JobFinished> finished = coordinator.Await(testing::Scaled(absl::Seconds(60)));
    ASSERT_TRUE(finished) << worker.Log();
    ASSERT_EQ(finished->error(), "");
    EXPECT_EQ(finished->result().status(), "depth_limit");
    const std::vector<std::string> listed(finished->handed_back().begin(), finished->handed_back().end());
    ASSERT_FALSE(listed.empty()) << "nothing handed back";
    EXPECT_EQ(listed, coordinator.handed_back());

    auto search = [&](const std::string& prefix) {
      absl::StatusOr<SolveRequest> r = RequestFromSpec(unit.spec());
      EXPECT_TRUE(r.ok()) << r.status();
      r->options.subtree = SearchOptions::SubtreePass{*ParseMoves(prefix), bound};
      absl::StatusOr<SolveResult> solved = Solve(*r);
      EXPECT_TRUE(solved.ok()) << solved.status();
      return solved.ok() ? *solved : SolveResult{};
    };
    const SolveResult whole = search("");
    uint64_t expanded = finished->result().stats().expanded();
    int next_bound = finished->next_bound();
    for (const std::string& prefix : listed) {
      EXPECT_GT(prefix.size(), 0u);
      const SolveResult part = search(prefix);
      EXPECT_EQ(part.status, SearchStatus::kDepthLimit);
      expanded += part.stats.expanded;
      if (part.next_bound != 0) next_bound = std::min(next_bound, part.next_bound);
    }
    EXPECT_EQ(expanded, whole.stats.expanded);
    EXPECT_EQ(next_bound, whole.next_bound);
  }
  server->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
}

// Cancelling a split job stops its units on every worker: jobs submitted
// right after start on those workers within the promised 200 ms (plus
// their own few milliseconds).
TEST(Service, CancellingASplitJobFreesEveryWorkerAtOnce) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  auto a = StartWorker(c, dir, "a", {"--max-search-threads=1"});
  auto b = StartWorker(c, dir, "b", {"--max-search-threads=1"});
  v1::JobSpec spec = SpecFor(kKorf17, "blank-first", "idastar", "manhattan");
  spec.set_max_workers(2);
  const std::string id = Submit(c.stub(), spec)->id();
  ASSERT_TRUE(AwaitMidThreshold(c.stub(), id, 56).ok());
  v1::Job cancelled;
  ASSERT_TRUE(Cancel(c.stub(), id, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
  const absl::Time after = absl::Now();
  std::vector<std::string> quick;
  for (int i = 0; i < 2; ++i) quick.push_back(Submit(c.stub(), SpecFor("8 1 3 4 0 2 7 6 5"))->id());
  for (const std::string& q : quick) {
    absl::StatusOr<v1::Job> done = AwaitState(c.stub(), q, v1::JOB_STATE_DONE, absl::Seconds(10));
    ASSERT_TRUE(done.ok()) << done.status();
  }
  EXPECT_LT(absl::Now() - after, testing::Scaled(absl::Milliseconds(400)));
  EXPECT_EQ(GetJob(c.stub(), id)->result().status(), "cancelled");
}

TEST_P(EachStoreService, KilledCoordinatorLosesNothingAndReportsEachJobOnce) {
  testing::TempDir dir;
  // Both workers come back, so the recovery grace is never waited out; it
  // only has to outlast a restart and a reconnect, which under a sanitizer
  // on a busy machine took more than the harness's 3 s (CI: the long job's
  // worker reclaimed it too late, and it ran again as attempt 3).
  std::vector<std::string> flags = StoreFlags();
  flags.push_back(absl::StrCat("--recovery-grace-ms=", absl::ToInt64Milliseconds(testing::Scaled(absl::Seconds(3)))));
  Coordinator c(dir, 0, flags);
  c.Start();
  auto a = StartWorker(c, dir, "a");
  auto b = StartWorker(c, dir, "b");
  std::vector<std::pair<std::string, int>> jobs;  // id, length
  jobs.emplace_back(Submit(c.stub(), SpecFor(kKorf3, "blank-first", "idastar"))->id(), kKorf3Length);
  jobs.emplace_back(Submit(c.stub(), SpecFor(kKorf4, "blank-first", "idastar"))->id(), kKorf4Length);
  for (const char* board : {"8 1 3 4 0 2 7 6 5", "8 6 7 2 5 4 3 0 1", "6 4 7 8 5 0 3 2 1"}) {
    jobs.emplace_back(Submit(c.stub(), SpecFor(board, "standard", "idastar"))->id(),
                      std::string(board) == "8 1 3 4 0 2 7 6 5" ? 14 : 31);
  }
  // Killed before an assignment is stored, the coordinator would rightly
  // start that job over under a new attempt number.
  for (int i : {0, 1}) {
    const absl::Status stored = AwaitStoredState(c.stub(), jobs[i].first, v1::JOB_STATE_RUNNING, absl::Seconds(10));
    ASSERT_TRUE(stored.ok()) << stored;
  }
  EXPECT_EQ(GetJob(c.stub(), jobs[4].first)->state(), v1::JOB_STATE_QUEUED);

  c.process()->Signal(SIGKILL);
  ASSERT_EQ(c.process()->Wait(absl::Seconds(5)), -1);  // killed, not exited
  absl::SleepFor(absl::Milliseconds(300));
  c.Start();

  for (const auto& [id, length] : jobs) {
    const testing::Watched w = WatchToEnd(c.stub(), id, absl::Seconds(90));
    EXPECT_TRUE(w.status.ok()) << w.status.error_message() << "\n" << c.process()->Log();
    ASSERT_EQ(w.finals(), 1) << id;
    const v1::Job& done = *w.final_job();
    EXPECT_EQ(done.state(), v1::JOB_STATE_DONE) << done.error();
    EXPECT_EQ(done.result().length(), length);
    EXPECT_LE(done.attempt(), 2);
    testing::ExpectReplays(done);
    // Asking again gives the same single answer.
    EXPECT_EQ(GetJob(c.stub(), id)->result().moves(), done.result().moves());
  }
  // The long jobs' workers kept them across the restart rather than start over.
  EXPECT_EQ(GetJob(c.stub(), jobs[0].first)->attempt(), 1) << c.process()->Log() << a->Log() << b->Log();
}

INSTANTIATE_TEST_SUITE_P(, EachStoreService, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(Service, FiveHundredConcurrentJobsFromSeveralClients) {
  testing::TempDir dir;
  Coordinator c(dir, 2);
  c.Start();
  const Board goal = *GoalPreset("standard", 3, 3);
  const testing::ExhaustiveDistances oracle(goal);
  constexpr int kClients = 5, kJobsEach = 100;
  std::atomic<int> right = 0, finals = 0;
  std::vector<std::string> failures;
  absl::Mutex mu;
  std::vector<std::thread> clients;
  for (int k = 0; k < kClients; ++k) {
    clients.emplace_back([&, k] {
      // Each client its own connection, submitting all its jobs first.
      auto stub =
          v1::SolverService::NewStub(grpc::CreateChannel(c.client_address(), grpc::InsecureChannelCredentials()));
      std::mt19937_64 rng(k);
      std::vector<std::pair<std::string, int>> mine;
      for (int i = 0; i < kJobsEach; ++i) {
        const Board start = RandomSolvableBoard(goal, rng);
        v1::JobSpec spec;
        *spec.mutable_start() = BoardToProto(start);
        spec.set_algorithm(i % 2 ? "idastar" : "astar");
        absl::StatusOr<v1::Job> job = Submit(*stub, spec);
        if (!job.ok()) {
          absl::MutexLock lock(&mu);
          failures.push_back(std::string(job.status().message()));
          continue;
        }
        mine.emplace_back(job->id(), oracle.Distance(start));
      }
      for (const auto& [id, distance] : mine) {
        const testing::Watched w = WatchToEnd(*stub, id, absl::Seconds(120));
        finals += w.finals();
        if (w.final_job() != nullptr && w.final_job()->result().length() == distance &&
            w.final_job()->result().optimal()) {
          ++right;
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_EQ(finals, kClients * kJobsEach);
  EXPECT_EQ(right, kClients * kJobsEach);
}

TEST(Service, SigtermDrainsTheCoordinatorAndLetsRunningJobsFinish) {
  testing::TempDir dir;
  const absl::Duration grace = testing::Scaled(absl::Seconds(20));
  Coordinator c(dir, 1, {absl::StrCat("--drain-grace-ms=", grace / absl::Milliseconds(1))});
  c.Start();
  const std::string id = Submit(c.stub(), SpecFor(kKorf4, "blank-first", "idastar"))->id();
  ASSERT_TRUE(AwaitState(c.stub(), id, v1::JOB_STATE_RUNNING, absl::Seconds(10)).ok());
  c.process()->Signal(SIGTERM);
  // New work is refused while it drains.
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(Submit(c.stub(), SpecFor("8 1 3 4 0 2 7 6 5")).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(c.process()->Wait(grace), 0) << c.process()->Log();
  c.Start();
  const absl::StatusOr<v1::Job> job = GetJob(c.stub(), id);
  ASSERT_TRUE(job.ok()) << job.status() << "\n" << c.process()->Log();
  EXPECT_EQ(job->state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(job->result().length(), kKorf4Length);
}

TEST(Service, SigtermedWorkerHandsItsJobBackWithoutPenalty) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  auto a = StartWorker(c, dir, "a", {"--drain-grace-ms=300"});
  const std::string id = Submit(c.stub(), SpecFor(kKorf3, "blank-first", "idastar"))->id();
  ASSERT_TRUE(AwaitState(c.stub(), id, v1::JOB_STATE_RUNNING, absl::Seconds(10)).ok());
  auto b = StartWorker(c, dir, "b");
  a->Signal(SIGTERM);
  EXPECT_EQ(a->Wait(absl::Seconds(10)), 0) << a->Log();
  const testing::Watched w = WatchToEnd(c.stub(), id, absl::Seconds(60));
  ASSERT_EQ(w.finals(), 1);
  EXPECT_EQ(w.final_job()->worker_id(), "b");
  EXPECT_EQ(w.final_job()->lost_attempts(), 0);
  EXPECT_EQ(w.final_job()->result().length(), kKorf3Length);
}

TEST(Service, GenericToolsFindHealthAndTheApiByReflection) {
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  auto channel = grpc::CreateChannel(c.client_address(), grpc::InsecureChannelCredentials());

  auto health = grpc::health::v1::Health::NewStub(channel);
  for (const char* service : {"", "npuzzle.v1.SolverService"}) {
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    ASSERT_TRUE(health->Check(&context, request, &response).ok()) << service;
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }

  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  grpc::ClientContext context;
  auto stream = reflection->ServerReflectionInfo(&context);
  grpc::reflection::v1alpha::ServerReflectionRequest list;
  list.set_list_services("");
  ASSERT_TRUE(stream->Write(list));
  grpc::reflection::v1alpha::ServerReflectionResponse listed;
  ASSERT_TRUE(stream->Read(&listed));
  std::vector<std::string> names;
  for (const auto& s : listed.list_services_response().service()) names.push_back(s.name());
  EXPECT_THAT(names, ::testing::Contains("npuzzle.v1.SolverService"));

  grpc::reflection::v1alpha::ServerReflectionRequest file;
  file.set_file_containing_symbol("npuzzle.v1.SolverService");
  ASSERT_TRUE(stream->Write(file));
  grpc::reflection::v1alpha::ServerReflectionResponse described;
  ASSERT_TRUE(stream->Read(&described));
  bool found = false;
  for (const std::string& bytes : described.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto proto;
    ASSERT_TRUE(proto.ParseFromString(bytes));
    for (const auto& service : proto.service()) {
      if (service.name() != "SolverService") continue;
      for (const auto& method : service.method()) found |= method.name() == "SubmitJob";
    }
  }
  EXPECT_TRUE(found);
  stream->WritesDone();
}

// A job that ends within a tick of the worker's progress loop (50 ms)
// sends nothing but its result: the IDA* thresholds and answers it passed
// on the way would only hold the result up behind messages and commits of
// their own. Each job is three writes then: admitted, started, finished.
// (A tick may still fall inside a job now and then: a little slack.)
TEST(Service, AQuickJobCostsTheStoreOnlyItsOwnThreeChanges) {
  testing::TempDir dir;
  Coordinator c(dir, 1);
  c.Start();
  constexpr int kJobs = 20;
  const Board goal = *GoalPreset("standard", 3, 3);
  std::mt19937_64 rng(7);
  for (int i = 0; i < kJobs; ++i) {
    v1::JobSpec spec;
    spec.mutable_start()->set_text(RandomWalk(goal, 12, rng).ToString());
    const testing::Watched watched = WatchToEnd(c.stub(), Submit(c.stub(), spec)->id(), absl::Seconds(30));
    ASSERT_NE(watched.final_job(), nullptr);
    ASSERT_EQ(watched.final_job()->state(), v1::JOB_STATE_DONE);
  }
  absl::StatusOr<testing::HttpResponse> scraped = testing::HttpGet("127.0.0.1", c.metrics_port(), "/metrics");
  ASSERT_TRUE(scraped.ok()) << scraped.status();
  const std::optional<double> writes = testing::MetricValue(scraped->body, "npuzzle_store_writes_total");
  ASSERT_TRUE(writes.has_value());
  EXPECT_GE(*writes, 3 * kJobs);
  EXPECT_LE(*writes, 3 * kJobs + 3);
}

TEST(Service, MetricsEndpointsCountWhatHappened) {
  using testing::MetricValue;
  testing::TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  ASSERT_GT(c.metrics_port(), 0);
  const std::string worker_port_file = dir.path() + "/worker-metrics-port";
  auto worker = StartWorker(c, dir, "m1", {"--metrics-listen=127.0.0.1:0", "--port-file=" + worker_port_file});

  std::vector<std::string> ids;
  for (const char* board : {"8 1 3 4 0 2 7 6 5", "1 2 3 4 5 6 0 7 8", "4 1 3 7 2 6 0 5 8"}) {
    ids.push_back(Submit(c.stub(), SpecFor(board))->id());
  }
  v1::JobSpec pdb = SpecFor("8 6 7 2 5 4 3 0 1", "standard", "idastar", "pdb");
  pdb.set_pdb_preset("8");
  ids.push_back(Submit(c.stub(), pdb)->id());
  ASSERT_EQ(Submit(c.stub(), SpecFor("1 2 3 4 5 6 8 7 0"))->state(), v1::JOB_STATE_DONE);  // unsolvable
  uint64_t expanded = 0;
  for (const std::string& id : ids) {
    absl::StatusOr<v1::Job> job = AwaitState(c.stub(), id, v1::JOB_STATE_DONE, absl::Seconds(60));
    ASSERT_TRUE(job.ok()) << job.status();
    expanded += job->result().stats().expanded();
  }
  EXPECT_EQ(GetJob(c.stub(), ids[3])->result().length(), 31);

  absl::StatusOr<testing::HttpResponse> scraped = testing::HttpGet("127.0.0.1", c.metrics_port(), "/metrics");
  ASSERT_TRUE(scraped.ok()) << scraped.status();
  ASSERT_EQ(scraped->code, 200);
  const std::string& coordinator = scraped->body;
  EXPECT_EQ(MetricValue(coordinator, "npuzzle_jobs_submitted_total"), 5);
  EXPECT_EQ(MetricValue(coordinator, "npuzzle_jobs_finished_total{state=\"done\"}"), 5);
  EXPECT_EQ(MetricValue(coordinator, "npuzzle_jobs{state=\"done\"}"), 5);
  EXPECT_EQ(MetricValue(coordinator, "npuzzle_job_latency_seconds_count"), 5);
  EXPECT_EQ(MetricValue(coordinator, "npuzzle_job_attempts_total"), 4);
  EXPECT_EQ(MetricValue(coordinator, "npuzzle_nodes_expanded_total"), expanded);
  EXPECT_EQ(MetricValue(coordinator, "npuzzle_queue_depth"), 0);
  EXPECT_EQ(MetricValue(coordinator, "npuzzle_workers_connected"), 1);
  EXPECT_EQ(MetricValue(coordinator, "npuzzle_coordinator_worker_free_slots{worker=\"m1\"}"), 1);

  int worker_port = 0;
  std::ifstream(worker_port_file) >> worker_port;
  ASSERT_GT(worker_port, 0);
  // The worker forgets a job just after sending its result, so its gauge
  // of running jobs may trail the coordinator's answer by a moment.
  std::string w;
  for (const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(5));;) {
    scraped = testing::HttpGet("127.0.0.1", worker_port, "/metrics");
    ASSERT_TRUE(scraped.ok()) << scraped.status();
    w = scraped->body;
    if (MetricValue(w, "npuzzle_worker_running_jobs") == 0 || absl::Now() > deadline) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(MetricValue(w, "npuzzle_worker_jobs_total{outcome=\"finished\"}"), 4);
  EXPECT_EQ(MetricValue(w, "npuzzle_worker_nodes_expanded_total"), expanded);
  EXPECT_EQ(MetricValue(w, "npuzzle_worker_running_jobs"), 0);
  EXPECT_EQ(MetricValue(w, "npuzzle_worker_slots"), 1);
  EXPECT_EQ(MetricValue(w, "npuzzle_pdb_tables_loaded"), 1);
}

}  // namespace
}  // namespace npuzzle
