#include "service/server/server_config.h"

#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npuzzle {

CLI::App* AddServerFlags(CLI::App& app, ServerConfig* c) {
  app.add_option("--listen", c->listen, "address for clients (host:port; port 0 picks one)");
  app.add_option("--worker-listen", c->worker_listen, "address workers dial; empty: the client address");
  app.add_option("--metrics-listen", c->metrics_listen, "Prometheus /metrics address (host:port; empty: off)");
  app.add_flag("--metrics-tenants", c->metrics_tenants,
               "show each tenant's queued and running jobs on /metrics under the tenant's name (off: /metrics, "
               "which takes no token, names no tenant)");
  app.add_option("--http-listen", c->http_listen,
                 "HTTP/JSON API and web page address (host:port; empty: off); HTTPS with --tls-cert");
  app.add_option("--http-max-connections", c->http_max_connections,
                 "HTTP connections served at once (each open watch holds one)");
  app.add_option("--http-max-connections-per-client", c->http_max_connections_per_client,
                 "HTTP connections served at once from any one address; idle ones close after 10 s");
  app.add_option("--port-file", c->port_file,
                 "once listening, write \"<client port> <worker port> <metrics port> <http port>\" here");

  app.add_option("--data-dir", c->data_dir, "job store (jobs.db) and pattern tables (pdb/)");
  app.add_option("--store", c->store,
                 "where jobs are kept: empty for SQLite in --data-dir, or a PostgreSQL URI "
                 "(postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=...), one coordinator a database");
  app.add_option("--store-file", c->store_file,
                 "a file holding the --store URI, read at start (a mounted Secret: keeps the password off the "
                 "command line)");
  app.add_flag("--standby", c->standby,
               "with a PostgreSQL --store another coordinator has: wait until it is gone, then take over its jobs "
               "(a second replica; without it such a coordinator exits after 10 s)");
  app.add_option("--advertise-host", c->advertise_host,
                 "with a PostgreSQL --store: the host or IP other coordinators reach this one at (a pod's IP); a "
                 "--standby then forwards its client, worker and HTTP ports to the active coordinator's, so every "
                 "replica serves");
  app.add_flag("--store-full-sync", c->store_full_sync,
               "fsync every store commit, to survive power loss (on; --store-full-sync=false: survive crashes only)");
  app.add_option("--local-workers", c->local_workers,
                 "worker processes to run here (-1: one per core; 0: remote workers only)");
  app.add_option("--worker-binary", c->worker_binary, "the worker program (default: npuzzle-worker beside this one)");
  app.add_option("--worker-progress-ms", c->worker_progress_ms,
                 "local workers: how often running jobs report progress");

  app.add_option("--retain-finished", c->retain_finished,
                 "delete finished jobs once this long past their end (168h, 90m, 60s; 0: keep them all)");
  app.add_option("--max-queued", c->max_queued, "jobs waiting before SubmitJob answers RESOURCE_EXHAUSTED");
  app.add_option("--max-lost-attempts", c->max_lost_attempts, "a job fails once its worker vanished this many times");
  app.add_option("--lease-timeout-ms", c->lease_timeout_ms, "a worker silent this long loses its jobs");
  app.add_option("--recovery-grace-ms", c->recovery_grace_ms,
                 "after a restart, how long running jobs wait for their workers");
  app.add_option("--drain-grace-ms", c->drain_grace_ms, "on SIGTERM, how long running jobs may take to finish");
  app.add_option("--default-max-nodes", c->default_max_nodes, "node limit for jobs that set none (0: none)");
  app.add_option("--default-max-time-ms", c->default_max_time_ms,
                 "time limit for jobs that set none, so an abandoned search cannot hold a worker forever (0: none)");
  app.add_option("--default-max-memory-mb", c->default_max_memory_mb, "memory limit for jobs that set none (0: none)");
  app.add_option("--max-nodes-ceiling", c->max_nodes_ceiling, "no job may ask for more nodes (0: no ceiling)");
  app.add_option("--max-time-ms-ceiling", c->max_time_ms_ceiling,
                 "no job may ask for more time, nor for none (0: no ceiling)");
  app.add_option("--max-memory-mb-ceiling", c->max_memory_mb_ceiling,
                 "no job may ask for more memory, so none exhausts a worker (0: no ceiling)");
  app.add_option("--max-threads-per-job", c->max_threads_per_job, "no job may ask for more search threads");

  app.add_option("--tls-cert", c->tls_cert,
                 "PEM certificate chain for both ports (empty: plaintext); re-read as it changes");
  app.add_option("--tls-key", c->tls_key, "PEM private key of --tls-cert; re-read as it changes");
  app.add_option("--worker-client-ca", c->worker_client_ca,
                 "PEM CA: the worker port admits only workers with a certificate it signed (mutual TLS)");
  app.add_option("--tls-reload-interval-s", c->tls_reload_interval_s,
                 "how often the TLS and --auth-tokens files are checked for changes");
  app.add_option("--auth-tokens", c->auth_tokens,
                 "file of \"TENANT SHA256-HEX-OF-TOKEN\" lines: clients must send a listed token and see only their "
                 "tenant's jobs (empty: no authentication); re-read as it changes");
  app.add_option("--tenant-max-queued", c->tenant_max_queued,
                 "jobs one tenant may have waiting before SubmitJob is RESOURCE_EXHAUSTED (0: none; --auth-tokens "
                 "lines may set max_queued=N per tenant)");
  app.add_option("--tenant-max-running", c->tenant_max_running,
                 "jobs one tenant may have running at once (0: none; --auth-tokens lines may set max_running=N)");
  app.add_option("--local-worker-tls-ca", c->local_worker_tls_ca,
                 "with TLS: the CA local workers trust (the certificate must name localhost)");
  app.add_option("--local-worker-tls-cert", c->local_worker_tls_cert,
                 "with --worker-client-ca: the local workers' client certificate");
  app.add_option("--local-worker-tls-key", c->local_worker_tls_key,
                 "with --worker-client-ca: the local workers' client key");

  CLI::App* backup = app.add_subcommand("backup", "copy the job store to a file while a server runs on it");
  // Its own variable: CLI11 fills a command's flags from the environment
  // even when the command is not named, and this must not overwrite the
  // server's --data-dir. The server reads it back when backup is named.
  backup->add_option("--data-dir", c->backup_data_dir, "the data directory whose store to copy")
      ->default_str(c->data_dir);
  backup->add_option("--to", c->backup_to, "the file to write the copy to")->required();
  return backup;
}

absl::Status Validate(ServerConfig& c) {
  std::vector<std::string> problems;
  auto check = [&](bool ok, const std::string& problem) {
    if (!ok) problems.push_back(problem);
  };
  check(!c.data_dir.empty(), "--data-dir must name a directory");
  check(c.store.empty() || c.store_file.empty(), "give --store or --store-file, not both");
  check(!c.standby || !(c.store + c.store_file).empty(), "--standby needs a PostgreSQL --store or --store-file");
  check(c.advertise_host.empty() || !(c.store + c.store_file).empty(),
        "--advertise-host needs a PostgreSQL --store or --store-file");
  check(!c.listen.empty(), "--listen must name an address");
  check(c.local_workers >= -1, "--local-workers must be -1 (one per core), 0 or more");
  check(c.max_queued > 0, "--max-queued must be at least 1");
  check(absl::ParseDuration(c.retain_finished, &c.retain) && c.retain >= absl::ZeroDuration(),
        absl::StrCat("--retain-finished '", c.retain_finished, "' is not a duration such as 168h, 90m or 60s"));
  check(c.max_lost_attempts > 0, "--max-lost-attempts must be at least 1");
  check(c.lease_timeout_ms > 0, "--lease-timeout-ms must be more than 0");
  check(c.recovery_grace_ms >= 0 && c.drain_grace_ms >= 0,
        "--recovery-grace-ms and --drain-grace-ms must not be negative");
  check(c.worker_progress_ms > 0, "--worker-progress-ms must be more than 0");
  check(c.max_threads_per_job > 0, "--max-threads-per-job must be at least 1");
  check(c.http_max_connections > 0, "--http-max-connections must be at least 1");
  check(c.http_max_connections_per_client > 0, "--http-max-connections-per-client must be at least 1");
  check(c.tls_reload_interval_s > 0, "--tls-reload-interval-s must be more than 0");
  check(c.tenant_max_queued >= 0 && c.tenant_max_running >= 0,
        "--tenant-max-queued and --tenant-max-running must be 0 (no limit) or more");
  check(c.worker_client_ca.empty() || !c.worker_listen.empty(),
        "--worker-client-ca needs the workers on their own port (--worker-listen)");
  const bool local_tls = !(c.local_worker_tls_ca + c.local_worker_tls_cert + c.local_worker_tls_key).empty();
  check(!local_tls || !c.tls_cert.empty(),
        "--local-worker-tls-* make local workers dial with TLS: they need --tls-cert");
  if (c.local_workers < 0) c.local_workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  check(c.local_workers == 0 || c.tls_cert.empty() || !c.local_worker_tls_ca.empty(),
        "local workers dial a TLS worker port: give --local-worker-tls-ca, or --local-workers=0");
  check(c.local_workers == 0 || c.worker_client_ca.empty() || !c.local_worker_tls_cert.empty(),
        "the worker port requires client certificates: give --local-worker-tls-cert and --local-worker-tls-key, "
        "or --local-workers=0");
  const auto over = [](uint64_t value, uint64_t ceiling) { return ceiling != 0 && (value == 0 || value > ceiling); };
  check(!over(c.default_max_nodes, c.max_nodes_ceiling), "--default-max-nodes is above --max-nodes-ceiling");
  check(!over(c.default_max_time_ms, c.max_time_ms_ceiling), "--default-max-time-ms is above --max-time-ms-ceiling");
  check(!over(c.default_max_memory_mb, c.max_memory_mb_ceiling),
        "--default-max-memory-mb is above --max-memory-mb-ceiling");
  if (problems.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
}

ManagerOptions ServerConfig::Manager() const {
  ManagerOptions options;
  options.max_queued = static_cast<size_t>(max_queued);
  options.max_lost_attempts = max_lost_attempts;
  options.lease_timeout = absl::Milliseconds(lease_timeout_ms);
  options.recovery_grace = absl::Milliseconds(recovery_grace_ms);
  options.limits.defaults.set_max_nodes(default_max_nodes);
  options.limits.defaults.set_max_time_ms(default_max_time_ms);
  options.limits.defaults.set_max_memory_mb(default_max_memory_mb);
  options.limits.ceilings.set_max_nodes(max_nodes_ceiling);
  options.limits.ceilings.set_max_time_ms(max_time_ms_ceiling);
  options.limits.ceilings.set_max_memory_mb(max_memory_mb_ceiling);
  options.limits.max_threads = max_threads_per_job;
  options.metrics_per_tenant = metrics_tenants;
  return options;
}

}  // namespace npuzzle
