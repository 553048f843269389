// Service benchmarks, against a real coordinator with two local workers on
// loopback:
//   latency: submit-to-final-result of trivial 3x3 jobs (Solve RPC), median
//            and 99th percentile, against the durability floor measured in
//            the same run: two fdatasync calls on the data directory's
//            filesystem (a job is stored when accepted and when finished)
//            plus two no-op unary RPCs (health Check);
//   throughput: trivial 3x3 jobs (as above) per second sustained for
//               --seconds by --clients concurrent Solve streams. The
//               default is enough streams to keep both cores busy: with 8
//               about a fifth of the CPU sits idle, each stream waiting
//               out its job's two commits.
//   soak (--soak_minutes N): throughput's load for N minutes on a
//         coordinator with --retain-finished --soak_retain; prints the
//         store's size on disk (jobs.db and its log) each --soak_every,
//         which retention must keep flat once the first jobs expire.
//
//   --postgres: the same against a coordinator whose jobs are in a
//               PostgreSQL cluster the bench starts (synchronous_commit on,
//               the default); the floor's syncs are then one-change commits
//               of the store to a database of their own beside it.
//   --standby (with --postgres): a second coordinator stands by beside the
//               first, forwarding to it (--advertise-host); half the
//               throughput run's clients dial it, and SubmitJob's latency
//               is measured through it too.
//   Both print SubmitJob's latency (answered once the job is stored).
//
//   service_bench [--seconds 30] [--clients 32] [--store_full_sync=false] [--postgres [--standby]]
//   service_bench --soak_minutes 30 [--soak_retain 60s]
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "engine/goals.h"
#include "engine/instances.h"
#include "grpcpp/grpcpp.h"
#include "health_check.grpc.pb.h"
#include "jobspec/job_spec.h"
#include "service/store/postgres_job_store.h"
#include "service/store/sqlite_job_store.h"
#include "tests/util/postgres_harness.h"
#include "tests/util/service_harness.h"

ABSL_FLAG(int, samples, 1000, "latency samples of each kind");
ABSL_FLAG(int, seconds, 30, "throughput run length");
ABSL_FLAG(int, clients, 32, "concurrent Solve streams in the throughput run");
ABSL_FLAG(bool, store_full_sync, true, "the coordinator's --store-full-sync");
ABSL_FLAG(bool, postgres, false, "keep the coordinator's jobs in a PostgreSQL cluster the bench starts");
ABSL_FLAG(bool, standby, false, "with --postgres: half the clients dial a standby coordinator that forwards");
ABSL_FLAG(int, soak_minutes, 0, "run the retention soak this long instead (0: latency and throughput)");
ABSL_FLAG(absl::Duration, soak_retain, absl::Seconds(60), "the soak's --retain-finished");
ABSL_FLAG(absl::Duration, soak_every, absl::Seconds(60), "how often the soak prints the store's size");

namespace npuzzle::bench {
namespace {

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// One 4 KiB overwrite made durable with fdatasync, as a commit's sync.
double SyncMicros(int fd) {
  static const std::string block(4096, 'x');
  const absl::Time t = absl::Now();
  if (pwrite(fd, block.data(), block.size(), 0) != static_cast<ssize_t>(block.size()) || fdatasync(fd) != 0) {
    return -1;
  }
  return absl::ToDoubleMicroseconds(absl::Now() - t);
}

// One one-change commit of `store` (the `i`th): what a store write costs,
// beside a bare fdatasync; -1 if it failed.
double StoreCommitMicros(JobStore& store, int i) {
  v1::Job job;
  job.set_id(absl::StrCat("job-", i));
  job.mutable_spec()->mutable_start()->set_text("8 1 3 4 0 2 7 6 5");
  const absl::Time t = absl::Now();
  if (!store.Commit({{job, i}})[0].ok()) return -1;
  return absl::ToDoubleMicroseconds(absl::Now() - t);
}

// Submit-to-final: one Solve stream read to its last event.
bool SolveOnce(v1::SolverService::Stub& stub, const v1::JobSpec& spec) {
  grpc::ClientContext context;
  v1::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  auto reader = stub.Solve(&context, request);
  v1::JobEvent e;
  bool done = false;
  while (reader->Read(&e)) done = e.has_state() && e.state().state() == v1::JOB_STATE_DONE;
  return reader->Finish().ok() && done;
}

// --clients streams of trivial jobs, each counted in `completed` as it
// ends, until `tick` (called every so often with the time since the
// start) answers zero; otherwise it answers how long to wait for the next.
// Client k dials stubs[k % stubs.size()].
void RunClients(const std::vector<v1::SolverService::Stub*>& stubs, std::atomic<int64_t>& completed,
                const std::function<absl::Duration(absl::Duration)>& tick) {
  const Board goal = *GoalPreset("standard", 3, 3);
  std::atomic<bool> stop = false;
  std::vector<std::thread> clients;
  for (int k = 0; k < absl::GetFlag(FLAGS_clients); ++k) {
    clients.emplace_back([&, k] {
      std::mt19937_64 local(100 + k);
      while (!stop) {
        v1::JobSpec spec;
        *spec.mutable_start() = BoardToProto(RandomWalk(goal, 8, local));
        if (SolveOnce(*stubs[k % stubs.size()], spec)) ++completed;
      }
    });
  }
  const absl::Time began = absl::Now();
  for (absl::Duration wait; (wait = tick(absl::Now() - began)) > absl::ZeroDuration();) absl::SleepFor(wait);
  stop = true;
  for (std::thread& t : clients) t.join();
}

int64_t StoreBytes(const std::string& data_dir) {
  int64_t bytes = 0;
  for (const char* file : {"/jobs.db", "/jobs.db-wal"}) {
    std::error_code error;
    const auto size = std::filesystem::file_size(data_dir + file, error);
    if (!error) bytes += static_cast<int64_t>(size);
  }
  return bytes;
}

int Soak() {
  testing::TempDir dir;
  const absl::Duration retain = absl::GetFlag(FLAGS_soak_retain);
  testing::Coordinator c(dir, 2, {absl::StrCat("--retain-finished=", absl::FormatDuration(retain))});
  c.Start();
  auto stub = v1::SolverService::NewStub(grpc::CreateChannel(c.client_address(), grpc::InsecureChannelCredentials()));
  const absl::Duration every = absl::GetFlag(FLAGS_soak_every);
  const absl::Duration length = absl::Minutes(absl::GetFlag(FLAGS_soak_minutes));
  std::cout << absl::StrFormat("soak: %d clients for %s, --retain-finished %s\n", absl::GetFlag(FLAGS_clients),
                               absl::FormatDuration(length), absl::FormatDuration(retain));
  std::cout << "  minute   jobs done   jobs/s   store bytes\n";
  std::atomic<int64_t> completed = 0;
  absl::Duration next = every;
  int64_t last_count = 0;
  // After two retentions the store holds about one retention's jobs; its
  // size from then on is what must stay flat.
  int64_t settled_min = INT64_MAX, settled_max = 0;
  RunClients({stub.get()}, completed, [&](absl::Duration elapsed) {
    if (elapsed >= next) {
      const int64_t bytes = StoreBytes(c.data_dir());
      const int64_t count = completed.load();
      std::cout << absl::StrFormat("  %6.1f  %10d  %7.0f   %11d\n", absl::ToDoubleMinutes(elapsed), count,
                                   (count - last_count) / absl::ToDoubleSeconds(every), bytes)
                << std::flush;
      last_count = count;
      if (elapsed >= 2 * retain) {
        settled_min = std::min(settled_min, bytes);
        settled_max = std::max(settled_max, bytes);
      }
      next += every;
    }
    return elapsed < length ? absl::Milliseconds(100) : absl::ZeroDuration();
  });
  if (settled_max > 0) {
    std::cout << absl::StrFormat("settled (from %s on): %d to %d bytes, max/min %.2f\n",
                                 absl::FormatDuration(2 * retain), settled_min, settled_max,
                                 static_cast<double>(settled_max) / settled_min);
  }
  return 0;
}

int Main() {
  if (absl::GetFlag(FLAGS_soak_minutes) > 0) return Soak();
  testing::TempDir dir;
  const bool postgres = absl::GetFlag(FLAGS_postgres);
  std::vector<std::string> flags = {
      absl::StrCat("--store-full-sync=", absl::GetFlag(FLAGS_store_full_sync) ? "true" : "false")};
  // A store of the same kind beside the coordinator's, for the commits the
  // floor counts.
  std::unique_ptr<testing::Postgres> pg;
  std::unique_ptr<JobStore> probe;
  if (postgres) {
    pg = std::make_unique<testing::Postgres>(testing::Postgres::Place::kDisk);
    if (!pg->ok()) {
      std::cerr << pg->status() << "\n";
      return 1;
    }
    flags.push_back("--store=" + pg->uri());
    pg->Sql("CREATE DATABASE probe");
    absl::StatusOr<std::unique_ptr<PostgresJobStore>> opened = PostgresJobStore::Open(pg->uri("probe"));
    if (opened.ok()) probe = *std::move(opened);
  } else {
    absl::StatusOr<std::unique_ptr<SqliteJobStore>> opened = SqliteJobStore::Open(dir.path() + "/probe.db", true);
    if (opened.ok()) probe = *std::move(opened);
  }
  if (probe == nullptr) return 1;
  const bool standby = absl::GetFlag(FLAGS_standby);
  if (standby && !postgres) {
    std::cerr << "--standby needs --postgres\n";
    return 2;
  }
  if (standby) flags.push_back("--advertise-host=127.0.0.1");
  testing::Coordinator c(dir, 2, flags);
  c.Start();
  testing::TempDir standby_dir;
  std::unique_ptr<testing::Coordinator> b;
  std::unique_ptr<v1::SolverService::Stub> via_b;
  if (standby) {
    flags.push_back("--standby");
    b = std::make_unique<testing::Coordinator>(standby_dir, 0, flags);
    b->Launch();
    via_b = testing::Dial(b->client_address());
    // Ready once it forwards: a call through it reaches the active one.
    while (testing::GetJob(*via_b, "probe").status().code() != absl::StatusCode::kNotFound) {
      absl::SleepFor(absl::Milliseconds(50));
    }
  }
  auto channel = grpc::CreateChannel(c.client_address(), grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  auto stub = v1::SolverService::NewStub(channel);
  const Board goal = *GoalPreset("standard", 3, 3);
  std::mt19937_64 rng(1);

  const std::string sync_file = c.data_dir() + "/bench-sync";
  const int fd = open(sync_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return 1;
  // First, as they would load the disk under the jobs if interleaved.
  std::vector<double> commit_us;
  for (int i = 0; i < absl::GetFlag(FLAGS_samples); ++i) commit_us.push_back(StoreCommitMicros(*probe, i + 1));
  // Interleaved, so all three see the same machine.
  std::vector<double> sync_us, noop_us, job_us, submit_us;
  for (int i = 0; i < absl::GetFlag(FLAGS_samples); ++i) {
    sync_us.push_back(SyncMicros(fd));
    absl::Time t = absl::Now();
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckResponse response;
    if (!health->Check(&context, {}, &response).ok()) return 1;
    noop_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t));

    v1::JobSpec spec;
    *spec.mutable_start() = BoardToProto(RandomWalk(goal, 8, rng));
    t = absl::Now();
    if (!SolveOnce(*stub, spec)) return 1;
    job_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t));
  }
  // On their own: the jobs they leave run meanwhile.
  const auto submit_micros = [&](v1::SolverService::Stub& to) {
    grpc::ClientContext context;
    v1::SubmitJobRequest submit;
    *submit.mutable_spec()->mutable_start() = BoardToProto(RandomWalk(goal, 8, rng));
    v1::Job submitted;
    const absl::Time t = absl::Now();
    if (!to.SubmitJob(&context, submit, &submitted).ok()) return -1.0;
    return absl::ToDoubleMicroseconds(absl::Now() - t);
  };
  std::vector<double> forwarded_submit_us;
  for (int i = 0; i < absl::GetFlag(FLAGS_samples); ++i) {
    submit_us.push_back(submit_micros(*stub));
    if (standby) forwarded_submit_us.push_back(submit_micros(*via_b));
    if (submit_us.back() < 0 || (standby && forwarded_submit_us.back() < 0)) return 1;
  }
  close(fd);
  unlink(sync_file.c_str());
  // PostgreSQL syncs on its own side: its floor is two of its commits.
  const double floor = 2 * Median(postgres ? commit_us : sync_us) + 2 * Median(noop_us);
  std::cout << absl::StrFormat(
      "latency (%d samples, store %s, store_full_sync=%s):\n"
      "  fdatasync            median %7.0f us   p99 %7.0f us\n"
      "  store commit         median %7.0f us   p99 %7.0f us   (one change)\n"
      "  no-op unary RPC      median %7.0f us   p99 %7.0f us\n"
      "  durability floor     %7.0f us   (2 %s + 2 no-op RPCs, medians)\n"
      "  trivial 3x3 job      median %7.0f us   p99 %7.0f us   (submit to final result)\n"
      "  job / floor          %7.2fx\n"
      "  SubmitJob            median %7.0f us   p99 %7.0f us   (answered once stored)\n",
      job_us.size(), postgres ? "PostgreSQL" : "SQLite", absl::GetFlag(FLAGS_store_full_sync) ? "true" : "false",
      Median(sync_us), Percentile(sync_us, 0.99), Median(commit_us), Percentile(commit_us, 0.99), Median(noop_us),
      Percentile(noop_us, 0.99), floor, postgres ? "store commits" : "fdatasync", Median(job_us),
      Percentile(job_us, 0.99), Median(job_us) / floor, Median(submit_us), Percentile(submit_us, 0.99));
  if (standby) {
    std::cout << absl::StrFormat(
        "  SubmitJob, standby  median %7.0f us   p99 %7.0f us   (forwarded to the active one)\n",
        Median(forwarded_submit_us), Percentile(forwarded_submit_us, 0.99));
  }

  std::atomic<int64_t> completed = 0;
  const absl::Time began = absl::Now();
  std::vector<v1::SolverService::Stub*> stubs = {stub.get()};
  if (standby) stubs.push_back(via_b.get());
  RunClients(stubs, completed, [](absl::Duration elapsed) {
    return elapsed < absl::Seconds(absl::GetFlag(FLAGS_seconds)) ? absl::Milliseconds(100) : absl::ZeroDuration();
  });
  const double seconds = absl::ToDoubleSeconds(absl::Now() - began);
  std::cout << absl::StrFormat(
      "throughput: %d trivial 3x3 jobs in %.1f s with 2 local workers and %d clients%s: %.0f jobs/s\n",
      completed.load(), seconds, absl::GetFlag(FLAGS_clients), standby ? ", half through the standby" : "",
      completed / seconds);
  return 0;
}

}  // namespace
}  // namespace npuzzle::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return npuzzle::bench::Main();
}
