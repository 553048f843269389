// npuzzle-server: the coordinator. Serves the public SolverService and the
// internal WorkerService, keeps jobs in SQLite under --data-dir, and by
// default runs one local worker process per core so one command runs the
// whole system. SIGTERM: refuse new jobs, let running ones finish for
// --drain-grace-ms, leave the rest to their workers after a restart, stop,
// exit 0.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/env_flags.h"
#include "common/log.h"
#include "common/metrics_server.h"
#include "common/tls.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "service/api/http_api.h"
#include "service/api/solver_service.h"
#include "service/api/token_book.h"
#include "service/api/web_page.h"
#include "service/jobs/job_manager.h"
#include "service/server/local_workers.h"
#include "service/store/data_dir_lock.h"
#include "service/store/sqlite_job_store.h"
#include "service/workers/worker_service.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051", "address for clients (host:port; port 0 picks one)");
ABSL_FLAG(std::string, worker_listen, "0.0.0.0:50052", "address workers dial; empty: the client address");
ABSL_FLAG(std::string, data_dir, "npuzzle-data", "job store (jobs.db) and pattern tables (pdb/)");
ABSL_FLAG(int, local_workers, -1, "worker processes to run here (-1: one per core; 0: remote workers only)");
ABSL_FLAG(std::string, worker_binary, "", "the worker program (default: npuzzle-worker beside this one)");
ABSL_FLAG(int, max_queued, 10000, "jobs waiting before SubmitJob answers RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_lost_attempts, 3, "a job fails once its worker vanished this many times");
ABSL_FLAG(int64_t, lease_timeout_ms, 10000, "a worker silent this long loses its jobs");
ABSL_FLAG(int64_t, recovery_grace_ms, 3000, "after a restart, how long running jobs wait for their workers");
ABSL_FLAG(int64_t, drain_grace_ms, 20000, "on SIGTERM, how long running jobs may take to finish");
ABSL_FLAG(bool, store_full_sync, true, "fsync every store commit (survives power loss; slower)");
ABSL_FLAG(uint64_t, default_max_nodes, 0, "limit for jobs that set none (0: none)");
ABSL_FLAG(uint64_t, default_max_time_ms, 3600000,
          "time limit for jobs that set none, so an abandoned search cannot hold a worker forever (0: none)");
ABSL_FLAG(uint64_t, default_max_memory_mb, 2048, "limit for jobs that set none (0: none)");
ABSL_FLAG(uint64_t, max_nodes_ceiling, 0, "no job may ask for more (0: no ceiling)");
ABSL_FLAG(uint64_t, max_time_ms_ceiling, 86400000, "no job may ask for more time, nor for none (0: no ceiling)");
ABSL_FLAG(uint64_t, max_memory_mb_ceiling, 8192, "no job may ask for more, so none exhausts a worker (0: none)");
ABSL_FLAG(int, max_threads_per_job, 64, "no job may ask for more search threads");
ABSL_FLAG(int64_t, worker_progress_ms, 250, "local workers: how often running jobs report progress");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9090", "Prometheus /metrics address (host:port; empty: off)");
ABSL_FLAG(std::string, http_listen, "0.0.0.0:8080",
          "HTTP/JSON API and web page address (host:port; empty: off); HTTPS with --tls-cert");
ABSL_FLAG(int, http_max_connections, 512, "HTTP connections served at once (each open watch holds one)");
ABSL_FLAG(std::string, port_file, "",
          "once listening, write \"<client port> <worker port> <metrics port> <http port>\" here");
ABSL_FLAG(std::string, to, "", "backup: the file to write the copy of the job store to");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain for both ports (empty: plaintext); re-read as it changes");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert; re-read as it changes");
ABSL_FLAG(std::string, worker_client_ca, "",
          "PEM CA: the worker port admits only workers with a certificate it signed (mutual TLS)");
ABSL_FLAG(int64_t, tls_reload_interval_s, 60, "how often the TLS and --auth-tokens files are checked for changes");
ABSL_FLAG(std::string, auth_tokens, "",
          "file of \"TENANT SHA256-HEX-OF-TOKEN\" lines: clients must send a listed token and see only their "
          "tenant's jobs (empty: no authentication); re-read as it changes");
ABSL_FLAG(int64_t, tenant_max_queued, 0,
          "jobs one tenant may have waiting before SubmitJob is RESOURCE_EXHAUSTED (0: none; --auth-tokens lines "
          "may set max_queued=N per tenant)");
ABSL_FLAG(int64_t, tenant_max_running, 0,
          "jobs one tenant may have running at once (0: none; --auth-tokens lines may set max_running=N)");
ABSL_FLAG(std::string, local_worker_tls_ca, "",
          "with TLS: the CA local workers trust (the certificate must name localhost)");
ABSL_FLAG(std::string, local_worker_tls_cert, "", "with --worker-client-ca: the local workers' client certificate");
ABSL_FLAG(std::string, local_worker_tls_key, "", "with --worker-client-ca: the local workers' client key");

namespace npuzzle {
namespace {

constexpr absl::Duration kLocalWorkerDrain = absl::Seconds(2);
constexpr absl::Duration kStoreCheckInterval = absl::Seconds(1);
constexpr absl::Duration kStoreCheckWait = absl::Milliseconds(500);

std::unique_ptr<grpc::Server> Serve(const std::string& address, const std::vector<grpc::Service*>& services,
                                    const std::shared_ptr<grpc::ServerCredentials>& credentials, int* port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, credentials, port);
  for (grpc::Service* s : services) builder.RegisterService(s);
  // Workers and watchers hold long streams; let their keepalive pings in.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  return builder.BuildAndStart();
}

// Health for the whole server ("") and each service by name, as probes and
// generic tools ask for either.
// `ready` mirrors it for the metrics listener's /readyz (Kubernetes' gRPC
// probes cannot reach a TLS port).
void SetHealth(grpc::Server* client_server, grpc::Server* worker_server, bool serving, std::atomic<bool>* ready) {
  ready->store(serving);
  for (grpc::Server* s : {client_server, worker_server}) {
    if (s == nullptr) continue;
    grpc::HealthCheckServiceInterface* health = s->GetHealthCheckService();
    health->SetServingStatus(serving);
    for (const char* name : {"npuzzle.v1.SolverService", "npuzzle.v1.WorkerService"}) {
      health->SetServingStatus(name, serving);
    }
  }
}

std::string WorkerBinary() {
  if (!absl::GetFlag(FLAGS_worker_binary).empty()) return absl::GetFlag(FLAGS_worker_binary);
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (self.parent_path() / "npuzzle-worker").string();
}

// `npuzzle-server backup --data-dir D --to FILE`: an online copy of the
// job store, safe while a server runs on D.
int Backup() {
  const std::string to = absl::GetFlag(FLAGS_to);
  if (to.empty()) {
    Log("backup needs --to FILE");
    return 2;
  }
  const std::string from = absl::GetFlag(FLAGS_data_dir) + "/jobs.db";
  if (absl::Status s = SqliteJobStore::Backup(from, to); !s.ok()) {
    Log(std::string(s.message()));
    return 1;
  }
  Log(absl::StrCat("copied ", from, " to ", to));
  return 0;
}

// The ports' credentials, and the flags local workers need to dial the
// worker port; an error names what is missing.
struct Security {
  std::shared_ptr<grpc::ServerCredentials> client_port;
  std::shared_ptr<grpc::ServerCredentials> worker_port;
  std::vector<std::string> local_worker_flags;
};

absl::StatusOr<Security> SecurityFromFlags(bool shared_port, int local_workers) {
  ServerTls tls{absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key), "",
                absl::Seconds(absl::GetFlag(FLAGS_tls_reload_interval_s))};
  Security security;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> client = MakeServerCredentials(tls);
  if (!client.ok()) return client.status();
  security.client_port = *client;
  tls.client_ca_file = absl::GetFlag(FLAGS_worker_client_ca);
  if (!tls.client_ca_file.empty() && shared_port) {
    return absl::InvalidArgumentError("--worker-client-ca needs the workers on their own port (--worker-listen)");
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> worker = MakeServerCredentials(tls);
  if (!worker.ok()) return worker.status();
  security.worker_port = *worker;
  // Set even when empty: a worker would otherwise read its TLS settings
  // from the server's own NPUZZLE_TLS_* environment.
  const std::string ca = absl::GetFlag(FLAGS_local_worker_tls_ca);
  const std::string cert = absl::GetFlag(FLAGS_local_worker_tls_cert);
  const std::string key = absl::GetFlag(FLAGS_local_worker_tls_key);
  security.local_worker_flags = {"--tls-ca=" + ca, "--tls-cert=" + cert, "--tls-key=" + key,
                                 std::string("--tls-server-name=") + (tls.enabled() ? "localhost" : "")};
  if (!tls.enabled() && !(ca + cert + key).empty()) {
    return absl::InvalidArgumentError("--local-worker-tls-* make local workers dial with TLS: they need --tls-cert");
  }
  if (local_workers > 0 && tls.enabled() && ca.empty()) {
    return absl::InvalidArgumentError(
        "local workers dial a TLS worker port: give --local-worker-tls-ca, or --local-workers=0");
  }
  if (local_workers > 0 && !tls.client_ca_file.empty() && cert.empty()) {
    return absl::InvalidArgumentError(
        "the worker port requires client certificates: give --local-worker-tls-cert and --local-worker-tls-key, "
        "or --local-workers=0");
  }
  if (!tls.enabled()) {
    Log("WARNING: plaintext: the client and worker ports are unencrypted and unauthenticated "
        "(see --tls-cert, --tls-key, --worker-client-ca)");
  } else if (tls.client_ca_file.empty()) {
    Log("WARNING: the worker port admits any worker (see --worker-client-ca)");
  }
  return security;
}

int Main() {
  // Signals are taken by this thread with sigwait; every other thread, and
  // gRPC's, inherit the block.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  std::error_code error;
  std::filesystem::create_directories(data_dir, error);
  absl::StatusOr<std::unique_ptr<DataDirLock>> lock = DataDirLock::Acquire(data_dir);
  if (!lock.ok()) {
    Log(std::string(lock.status().message()));
    return 1;
  }
  absl::StatusOr<std::unique_ptr<JobStore>> store =
      SqliteJobStore::Open(data_dir + "/jobs.db", absl::GetFlag(FLAGS_store_full_sync));
  if (!store.ok()) {
    Log(std::string(store.status().message()));
    return 1;
  }

  ManagerOptions options;
  options.max_queued = absl::GetFlag(FLAGS_max_queued);
  options.max_lost_attempts = absl::GetFlag(FLAGS_max_lost_attempts);
  options.lease_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_lease_timeout_ms));
  options.recovery_grace = absl::Milliseconds(absl::GetFlag(FLAGS_recovery_grace_ms));
  options.limits.defaults.set_max_nodes(absl::GetFlag(FLAGS_default_max_nodes));
  options.limits.defaults.set_max_time_ms(absl::GetFlag(FLAGS_default_max_time_ms));
  options.limits.defaults.set_max_memory_mb(absl::GetFlag(FLAGS_default_max_memory_mb));
  options.limits.ceilings.set_max_nodes(absl::GetFlag(FLAGS_max_nodes_ceiling));
  options.limits.ceilings.set_max_time_ms(absl::GetFlag(FLAGS_max_time_ms_ceiling));
  options.limits.ceilings.set_max_memory_mb(absl::GetFlag(FLAGS_max_memory_mb_ceiling));
  options.limits.max_threads = absl::GetFlag(FLAGS_max_threads_per_job);
  std::unique_ptr<TokenBook> tokens;
  if (const std::string path = absl::GetFlag(FLAGS_auth_tokens); !path.empty()) {
    absl::StatusOr<std::unique_ptr<TokenBook>> opened =
        TokenBook::Open(path, absl::Seconds(absl::GetFlag(FLAGS_tls_reload_interval_s)));
    if (!opened.ok()) {
      Log(std::string(opened.status().message()));
      return 2;
    }
    tokens = *std::move(opened);
    if (absl::GetFlag(FLAGS_tls_cert).empty()) {
      Log("WARNING: --auth-tokens without --tls-cert: tokens cross the network in the clear");
    }
  } else {
    Log("WARNING: no --auth-tokens: every client may submit, read and cancel every job");
  }
  const TenantQuota default_quota{absl::GetFlag(FLAGS_tenant_max_queued), absl::GetFlag(FLAGS_tenant_max_running)};
  if (default_quota.max_queued < 0 || default_quota.max_running < 0) {
    Log("--tenant-max-queued and --tenant-max-running must be 0 (no limit) or more");
    return 2;
  }
  options.quota_of = [&tokens, default_quota](const std::string& tenant) {
    return tokens ? tokens->QuotaOf(tenant, default_quota) : default_quota;
  };
  JobManager manager(store->get(), options);
  if (absl::Status s = manager.Start(); !s.ok()) {
    Log(std::string(s.message()));
    return 1;
  }

  int local = absl::GetFlag(FLAGS_local_workers);
  if (local < 0) local = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string worker_listen = absl::GetFlag(FLAGS_worker_listen);
  absl::StatusOr<Security> security = SecurityFromFlags(worker_listen.empty(), local);
  if (!security.ok()) {
    Log(std::string(security.status().message()));
    return 2;
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  JobApi api(&manager, tokens.get());
  SolverServiceImpl solver(&api);
  WorkerServiceImpl workers(&manager);
  int client_port = 0, worker_port = 0;
  std::unique_ptr<grpc::Server> client_server, worker_server;
  if (worker_listen.empty()) {
    client_server = Serve(absl::GetFlag(FLAGS_listen), {&solver, &workers}, security->client_port, &client_port);
    worker_port = client_port;
  } else {
    client_server = Serve(absl::GetFlag(FLAGS_listen), {&solver}, security->client_port, &client_port);
    worker_server = Serve(worker_listen, {&workers}, security->worker_port, &worker_port);
  }
  if (client_server == nullptr || client_port == 0 || (!worker_listen.empty() && worker_port == 0)) {
    Log("cannot listen on " + absl::GetFlag(FLAGS_listen) + " / " + worker_listen);
    return 1;
  }
  std::atomic<bool> ready{false};
  std::unique_ptr<MetricsServer> metrics_server;
  if (const std::string listen = absl::GetFlag(FLAGS_metrics_listen); !listen.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsServer>> started =
        MetricsServer::Start(listen, {&manager.metrics(), [&ready] { return ready.load(); }});
    if (!started.ok()) {
      Log(std::string(started.status().message()));
      return 1;
    }
    metrics_server = *std::move(started);
  }
  const int metrics_port = metrics_server ? metrics_server->port() : 0;
  std::unique_ptr<HttpApiServer> http_server;
  if (const std::string listen = absl::GetFlag(FLAGS_http_listen); !listen.empty()) {
    absl::StatusOr<std::unique_ptr<HttpApiServer>> started =
        HttpApiServer::Start(&api, {.listen = listen,
                                    .page = WebPage(),
                                    .tls_cert = absl::GetFlag(FLAGS_tls_cert),
                                    .tls_key = absl::GetFlag(FLAGS_tls_key),
                                    .tls_reload_interval = absl::Seconds(absl::GetFlag(FLAGS_tls_reload_interval_s)),
                                    .max_connections = absl::GetFlag(FLAGS_http_max_connections)});
    if (!started.ok()) {
      Log(std::string(started.status().message()));
      return 1;
    }
    http_server = *std::move(started);
  }
  const int http_port = http_server ? http_server->port() : 0;
  SetHealth(client_server.get(), worker_server.get(), true, &ready);
  Log(absl::StrCat("serving clients on port ", client_port, ", workers on port ", worker_port, ", metrics on port ",
                   metrics_port, ", HTTP on port ", http_port, ", data in ", data_dir));
  if (const std::string file = absl::GetFlag(FLAGS_port_file); !file.empty()) {
    WritePortFile(file, absl::StrCat(client_port, " ", worker_port, " ", metrics_port, " ", http_port, "\n"));
  }

  std::vector<std::string> worker_argv = {
      WorkerBinary(), absl::StrCat("--coordinator=127.0.0.1:", worker_port), "--concurrency=1",
      absl::StrCat("--data-dir=", data_dir), "--exit-with-parent",
      // They would share one port; the coordinator reports on each of them.
      "--metrics-listen=", absl::StrCat("--progress-interval-ms=", absl::GetFlag(FLAGS_worker_progress_ms)),
      // By the time they are stopped the coordinator has waited for their
      // jobs already: they need only hand back what is left.
      absl::StrCat("--drain-grace-ms=", kLocalWorkerDrain / absl::Milliseconds(1))};
  worker_argv.insert(worker_argv.end(), security->local_worker_flags.begin(), security->local_worker_flags.end());
  LocalWorkers local_workers(worker_argv, local);
  if (local > 0) {
    local_workers.Start();
    Log(absl::StrCat("started ", local, " local worker", local == 1 ? "" : "s"));
  }

  // Health follows the store: NOT_SERVING while a write cannot commit
  // (disk full, file locked by another process, I/O errors), so probes and
  // load balancers send no one to a server that cannot accept a job.
  absl::Notification draining;
  std::thread store_health([&] {
    bool serving = true;
    while (!draining.WaitForNotificationWithTimeout(kStoreCheckInterval)) {
      const absl::Status writable = (*store)->CheckWritable(kStoreCheckWait);
      if (writable.ok() == serving || draining.HasBeenNotified()) continue;
      serving = writable.ok();
      SetHealth(client_server.get(), worker_server.get(), serving, &ready);
      Log(serving ? std::string("the job store is writable again: SERVING")
                  : absl::StrCat("the job store cannot be written (", writable.message(), "): NOT_SERVING"));
    }
  });

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  Log(absl::StrCat("signal ", signal_number, ": draining (up to ", absl::GetFlag(FLAGS_drain_grace_ms), " ms)"));
  draining.Notify();
  store_health.join();
  SetHealth(client_server.get(), worker_server.get(), false, &ready);
  manager.Drain(absl::Milliseconds(absl::GetFlag(FLAGS_drain_grace_ms)));
  // Close the doors before stopping local workers, so they cannot dial in
  // again and take work back.
  http_server.reset();
  for (grpc::Server* s : {client_server.get(), worker_server.get()}) {
    if (s != nullptr) s->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
  local_workers.Stop(kLocalWorkerDrain + absl::Seconds(3));
  Log("stopped");
  return 0;
}

}  // namespace
}  // namespace npuzzle

int main(int argc, char** argv) {
  npuzzle::SetLogName("npuzzle-server");
  const std::vector<std::string> command = npuzzle::ParseServiceFlags(
      argc, argv,
      "npuzzle-server [flags]: the npuzzle coordinator (every flag also reads NPUZZLE_<FLAG>)\n"
      "npuzzle-server backup --data-dir D --to FILE: copy the job store while a server runs");
  if (command.empty()) return npuzzle::Main();
  if (command == std::vector<std::string>{"backup"}) return npuzzle::Backup();
  std::cerr << "npuzzle-server: unknown command '" << command.front() << "' (the one command is backup)\n";
  return 2;
}
