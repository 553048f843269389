// npuzzle-worker: runs solve jobs for a coordinator. SIGTERM: take no more
// work, let running jobs finish within --drain-grace-ms, hand back the
// rest, exit 0.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <iostream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/env_flags.h"
#include "common/log.h"
#include "common/metrics_server.h"
#include "common/tls.h"
#include "engine/limits.h"
#include "worker/worker_agent.h"

ABSL_FLAG(std::string, coordinator, "localhost:50052", "the coordinator's worker address (host:port)");
ABSL_FLAG(int, concurrency, 1, "jobs run at once");
ABSL_FLAG(int, max_search_threads, 0, "threads one job may use (0: one per core)");
ABSL_FLAG(std::string, worker_id, "", "default: <host>-<pid>");
ABSL_FLAG(std::string, data_dir, "", "pattern tables are cached in DIR/pdb (default $NPUZZLE_DATA_DIR or ~/.cache)");
ABSL_FLAG(uint64_t, pdb_cache_mb, 0,
          "size budget of the pattern table cache in DIR/pdb; least recently used tables no process holds are "
          "evicted (0: 4096)");
ABSL_FLAG(int64_t, progress_interval_ms, 250, "how often a running job reports progress");
ABSL_FLAG(int64_t, heartbeat_ms, 1000, "how often the worker tells the coordinator it is alive");
ABSL_FLAG(int64_t, drain_grace_ms, 25000, "on SIGTERM, how long running jobs may take to finish");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9091", "Prometheus /metrics address (host:port; empty: off)");
ABSL_FLAG(std::string, port_file, "", "once serving metrics, write the metrics port here");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA that signed the coordinator's certificate (empty: plaintext)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate, for a coordinator that requires one");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(std::string, tls_server_name, "",
          "the name the coordinator's certificate must hold (default: the host dialled)");
ABSL_FLAG(bool, exit_with_parent, false, "drain and exit when the parent process dies (local workers)");

int main(int argc, char** argv) {
  npuzzle::ParseServiceFlags(argc, argv,
                             "npuzzle-worker [flags]: runs npuzzle jobs (every flag also reads NPUZZLE_<FLAG>)");

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  if (absl::GetFlag(FLAGS_exit_with_parent)) {
    const pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) return 0;
  }

  npuzzle::AgentOptions options;
  options.coordinator = absl::GetFlag(FLAGS_coordinator);
  options.concurrency = std::max(1, absl::GetFlag(FLAGS_concurrency));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.max_search_threads =
      absl::GetFlag(FLAGS_max_search_threads) > 0 ? absl::GetFlag(FLAGS_max_search_threads) : cores;
  options.worker_id = absl::GetFlag(FLAGS_worker_id);
  if (options.worker_id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    options.worker_id = absl::StrCat(host, "-", getpid());
  }
  npuzzle::SetLogName("npuzzle-worker " + options.worker_id);
  if (!absl::GetFlag(FLAGS_data_dir).empty()) options.pdb_dir = absl::GetFlag(FLAGS_data_dir) + "/pdb";
  if (absl::GetFlag(FLAGS_pdb_cache_mb) > npuzzle::kMaxMemoryMb) {
    std::cerr << "npuzzle-worker: --pdb-cache-mb " << absl::GetFlag(FLAGS_pdb_cache_mb) << " is too large\n";
    return 2;
  }
  options.pdb_cache_bytes = absl::GetFlag(FLAGS_pdb_cache_mb) << 20;
  options.progress_interval = absl::Milliseconds(absl::GetFlag(FLAGS_progress_interval_ms));
  options.heartbeat_interval = absl::Milliseconds(absl::GetFlag(FLAGS_heartbeat_ms));
  options.drain_grace = absl::Milliseconds(absl::GetFlag(FLAGS_drain_grace_ms));
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      npuzzle::MakeChannelCredentials({absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
                                       absl::GetFlag(FLAGS_tls_key), absl::GetFlag(FLAGS_tls_server_name)},
                                      &options.channel_args);
  if (!credentials.ok()) {
    std::cerr << "npuzzle-worker: " << credentials.status().message() << "\n";
    return 2;
  }
  options.credentials = *credentials;

  npuzzle::WorkerAgent agent(options);
  std::unique_ptr<npuzzle::MetricsServer> metrics_server;
  if (const std::string listen = absl::GetFlag(FLAGS_metrics_listen); !listen.empty()) {
    absl::StatusOr<std::unique_ptr<npuzzle::MetricsServer>> started =
        npuzzle::MetricsServer::Start(listen, {&agent.metrics(), nullptr});
    if (!started.ok()) {
      std::cerr << "npuzzle-worker: " << started.status().message() << "\n";
      return 1;
    }
    metrics_server = *std::move(started);
    if (const std::string file = absl::GetFlag(FLAGS_port_file); !file.empty()) {
      npuzzle::WritePortFile(file, absl::StrCat(metrics_server->port(), "\n"));
    }
  }
  std::thread worker([&agent] { agent.Run(); });
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  agent.Drain();
  worker.join();
  metrics_server.reset();
  return 0;
}
