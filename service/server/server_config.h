// ServerConfig: everything npuzzle-server is told, in one struct. It is
// filled from the command line and NPUZZLE_<FLAG> variables (AddFlags),
// checked in one place (Validate), and the rest of the server reads its
// settings from here and nowhere else.
#ifndef NPUZZLE_SERVICE_SERVER_SERVER_CONFIG_H_
#define NPUZZLE_SERVICE_SERVER_SERVER_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/cli_fwd.h"
#include "service/jobs/job_manager.h"

namespace npuzzle {

struct ServerConfig {
  // Where it listens.
  std::string listen = "0.0.0.0:50051";
  std::string worker_listen = "0.0.0.0:50052";
  std::string metrics_listen = "0.0.0.0:9090";
  bool metrics_tenants = false;
  std::string http_listen = "0.0.0.0:8080";
  int http_max_connections = 512;
  int http_max_connections_per_client = 64;
  std::string port_file;

  // Its data, and the local workers it supervises.
  std::string data_dir = "npuzzle-data";
  bool store_full_sync = true;
  std::string store;           // empty: SQLite in data_dir; else a PostgreSQL URI
  std::string store_file;      // a file holding `store` (a mounted Secret)
  bool standby = false;        // PostgreSQL: wait for the active coordinator to go
  std::string advertise_host;  // where other coordinators reach this one: standbys forward to it
  int local_workers = -1;      // -1: one per core
  std::string worker_binary;
  int64_t worker_progress_ms = 250;

  // Jobs and leases.
  // Finished jobs older than this are deleted (absl duration: "168h",
  // "90m", "60s"; "0": kept for ever). Validate sets `retain` from it.
  std::string retain_finished = "168h";
  absl::Duration retain = absl::Hours(168);
  int max_queued = 10000;
  int max_lost_attempts = 3;
  int64_t lease_timeout_ms = 10000;
  int64_t recovery_grace_ms = 3000;
  int64_t drain_grace_ms = 20000;
  uint64_t default_max_nodes = 0;
  uint64_t default_max_time_ms = 3600000;
  uint64_t default_max_memory_mb = 2048;
  uint64_t max_nodes_ceiling = 0;
  uint64_t max_time_ms_ceiling = 86400000;
  uint64_t max_memory_mb_ceiling = 8192;
  int max_threads_per_job = 64;

  // Security: TLS, tokens and tenants.
  std::string tls_cert;
  std::string tls_key;
  std::string worker_client_ca;
  int64_t tls_reload_interval_s = 60;
  std::string auth_tokens;
  int64_t tenant_max_queued = 0;
  int64_t tenant_max_running = 0;
  std::string local_worker_tls_ca;
  std::string local_worker_tls_cert;
  std::string local_worker_tls_key;

  // `npuzzle-server backup`: the data directory whose store it copies
  // (empty: --data-dir's), and the file the copy goes to.
  std::string backup_data_dir;
  std::string backup_to;

  // The job manager's part of it.
  ManagerOptions Manager() const;
  TenantQuota DefaultQuota() const { return {tenant_max_queued, tenant_max_running}; }
  std::string JobStorePath() const { return data_dir + "/jobs.db"; }
};

// Adds the server's flags to `app`, and the `backup` command with its own.
// Returns the backup command.
CLI::App* AddServerFlags(CLI::App& app, ServerConfig* config);

// Checks the whole configuration and settles what depends on the machine
// (local workers -1: one per core). The error names each flag at fault.
absl::Status Validate(ServerConfig& config);

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_SERVER_SERVER_CONFIG_H_
