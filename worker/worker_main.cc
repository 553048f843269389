// npuzzle-worker: runs solve jobs for a coordinator. SIGTERM: take no more
// work, let running jobs finish within --drain-grace-ms, hand back the
// rest, exit 0.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/cli.h"
#include "common/log.h"
#include "common/metrics_server.h"
#include "common/port_file.h"
#include "common/tls.h"
#include "engine/limits.h"
#include "worker/worker_agent.h"

namespace {

struct WorkerFlags {
  std::string coordinator = "localhost:50052";
  int concurrency = 1;
  int max_search_threads = 0;
  std::string worker_id;
  std::string data_dir;
  uint64_t pdb_cache_mb = 0;
  int64_t progress_interval_ms = 250;
  int64_t heartbeat_ms = 1000;
  int64_t drain_grace_ms = 25000;
  int64_t checkpoint_interval_ms = 5000;
  std::string metrics_listen = "0.0.0.0:9091";
  std::string port_file;
  npuzzle::ClientTls tls;
  bool exit_with_parent = false;
};

void AddFlags(CLI::App& app, WorkerFlags* f) {
  app.add_option("--coordinator", f->coordinator, "the coordinator's worker address (host:port)");
  app.add_option("--concurrency", f->concurrency, "jobs run at once")->check(CLI::Range(1, 1024).description(""));
  app.add_option("--max-search-threads", f->max_search_threads, "threads one job may use (0: one per core)")
      ->check(CLI::Range(0, 4096).description(""));
  app.add_option("--worker-id", f->worker_id, "how the coordinator knows this worker (default: <host>-<pid>)");
  app.add_option("--data-dir", f->data_dir,
                 "pattern tables are cached in DIR/pdb (default $NPUZZLE_DATA_DIR/pdb, else ~/.cache/npuzzle/pdb)");
  app.add_option("--pdb-cache-mb", f->pdb_cache_mb,
                 "size budget of the pattern table cache in DIR/pdb; least recently used tables no process holds are "
                 "evicted (0: 4096)")
      ->check(CLI::Range(uint64_t{0}, npuzzle::kMaxMemoryMb).description(""));
  app.add_option("--progress-interval-ms", f->progress_interval_ms, "how often a running job reports progress")
      ->check(CLI::PositiveNumber.description(""));
  app.add_option("--heartbeat-ms", f->heartbeat_ms, "how often the worker tells the coordinator it is alive")
      ->check(CLI::PositiveNumber.description(""));
  app.add_option("--drain-grace-ms", f->drain_grace_ms, "on SIGTERM, how long running jobs may take to finish")
      ->check(CLI::NonNegativeNumber.description(""));
  app.add_option("--checkpoint-interval-ms", f->checkpoint_interval_ms,
                 "how often a job's progress inside a long IDA* threshold is stored (a finished threshold: at once)")
      ->check(CLI::PositiveNumber.description(""));
  app.add_option("--metrics-listen", f->metrics_listen, "Prometheus /metrics address (host:port; empty: off)");
  app.add_option("--port-file", f->port_file, "once serving metrics, write the metrics port here");
  app.add_option("--tls-ca", f->tls.ca_file, "PEM CA that signed the coordinator's certificate (empty: plaintext)");
  app.add_option("--tls-cert", f->tls.cert_file, "PEM client certificate, for a coordinator that requires one");
  app.add_option("--tls-key", f->tls.key_file, "PEM private key of --tls-cert");
  app.add_option("--tls-server-name", f->tls.server_name,
                 "the name the coordinator's certificate must hold (default: the host dialled)");
  app.add_flag("--exit-with-parent", f->exit_with_parent,
               "drain and exit when the parent process dies (local workers)");
}

}  // namespace

int main(int argc, char** argv) {
  WorkerFlags flags;
  CLI::App app(
      "npuzzle-worker: runs npuzzle jobs for a coordinator. Every flag also reads NPUZZLE_<FLAG> "
      "(--coordinator: NPUZZLE_COORDINATOR); the command line wins.",
      "npuzzle-worker");
  npuzzle::cli::Configure(app);
  AddFlags(app, &flags);
  npuzzle::cli::ReadEnvironment(app);
  npuzzle::cli::ParseOrExit(app, argc, argv);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  if (flags.exit_with_parent) {
    const pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) return 0;
  }

  npuzzle::AgentOptions options;
  options.coordinator = flags.coordinator;
  options.concurrency = flags.concurrency;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.max_search_threads = flags.max_search_threads > 0 ? flags.max_search_threads : cores;
  options.worker_id = flags.worker_id;
  if (options.worker_id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    options.worker_id = absl::StrCat(host, "-", getpid());
  }
  npuzzle::SetLogName("npuzzle-worker " + options.worker_id);
  if (!flags.data_dir.empty()) options.pdb_dir = flags.data_dir + "/pdb";
  options.pdb_cache_bytes = flags.pdb_cache_mb << 20;
  options.progress_interval = absl::Milliseconds(flags.progress_interval_ms);
  options.heartbeat_interval = absl::Milliseconds(flags.heartbeat_ms);
  options.drain_grace = absl::Milliseconds(flags.drain_grace_ms);
  options.checkpoint_interval = absl::Milliseconds(flags.checkpoint_interval_ms);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      npuzzle::MakeChannelCredentials(flags.tls, &options.channel_args);
  if (!credentials.ok()) {
    npuzzle::Log(credentials.status().message());
    return 2;
  }
  options.credentials = *credentials;
  options.security = {.tls = !flags.tls.ca_file.empty(), .client_certificate = !flags.tls.cert_file.empty()};

  npuzzle::WorkerAgent agent(options);
  std::unique_ptr<npuzzle::MetricsServer> metrics_server;
  if (!flags.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<npuzzle::MetricsServer>> started =
        npuzzle::MetricsServer::Start(flags.metrics_listen, {[&agent] { return agent.metrics().Render(); }, nullptr});
    if (!started.ok()) {
      npuzzle::Log(started.status().message());
      return 1;
    }
    metrics_server = *std::move(started);
    if (!flags.port_file.empty()) npuzzle::WritePortFile(flags.port_file, absl::StrCat(metrics_server->port(), "\n"));
  }
  std::thread worker([&agent] { agent.Run(); });
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  agent.Drain();
  worker.join();
  metrics_server.reset();
  return 0;
}
