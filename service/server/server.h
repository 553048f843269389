// Server: one running coordinator, built from a ServerConfig. Start puts
// the parts up in the order each needs the last: the data directory's
// lock, the job store, tokens, the job manager, the gRPC ports, metrics,
// the HTTP API, local workers, and the watch on the store's health. Stop
// takes them down in the order that loses nothing: refuse new work, let
// running jobs finish for the drain grace, close the doors, then stop the
// local workers.
#ifndef NPUZZLE_SERVICE_SERVER_SERVER_H_
#define NPUZZLE_SERVICE_SERVER_SERVER_H_

#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/metrics.h"
#include "common/metrics_server.h"
#include "grpcpp/grpcpp.h"
#include "service/api/http_api.h"
#include "service/api/job_api.h"
#include "service/api/solver_service.h"
#include "service/api/token_book.h"
#include "service/jobs/job_cleaner.h"
#include "service/jobs/job_manager.h"
#include "service/server/forwarder.h"
#include "service/server/local_workers.h"
#include "service/server/server_config.h"
#include "service/store/data_dir_lock.h"
#include "service/store/job_store.h"
#include "service/workers/worker_service.h"

namespace npuzzle {

class Server {
 public:
  explicit Server(ServerConfig config) : config_(std::move(config)) {}
  ~Server();

  // Errors say what could not start; the server is then not running. A
  // standby's Start waits until the database is free, or until Stop is
  // called (from another thread: Cancelled).
  absl::Status Start();
  void Stop();

  // `npuzzle-server backup`: an online copy of the job store of
  // `config.data_dir` to `config.backup_to`.
  static absl::Status Backup(const ServerConfig& config);

 private:
  // A standby that knows its --advertise-host forwards its ports to the
  // active coordinator's while it waits (forwarder.h).
  absl::Status StartForwarding();
  void ForwardTo(const std::string& addresses);
  absl::Status OpenStore();
  absl::Status Listen();
  // The metrics port (with /healthz and /readyz) comes up before the store.
  absl::Status ServeMetrics();
  absl::Status ServeHttp();
  void SetHealth(bool serving);
  // Health follows the store: NOT_SERVING while a write cannot commit.
  void WatchStore();

  const ServerConfig config_;
  std::unique_ptr<DataDirLock> lock_;
  std::unique_ptr<JobStore> store_;
  std::unique_ptr<TokenBook> tokens_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<JobCleaner> cleaner_;  // with --retain-finished above 0
  std::unique_ptr<JobApi> api_;
  std::unique_ptr<SolverServiceImpl> solver_;
  std::unique_ptr<WorkerServiceImpl> workers_;
  std::unique_ptr<grpc::Server> client_server_;
  std::unique_ptr<grpc::Server> worker_server_;
  int client_port_ = 0;
  int worker_port_ = 0;
  std::vector<std::string> local_worker_tls_flags_;
  std::atomic<bool> ready_{false};
  Metrics role_metrics_;
  prometheus::Gauge* standing_by_ = nullptr;
  std::atomic<const JobManager*> shown_manager_{nullptr};  // in /metrics once started
  std::unique_ptr<MetricsServer> metrics_server_;
  std::map<std::string, std::unique_ptr<Forwarder>> forwarders_;  // by port: client, worker, http
  std::unique_ptr<HttpApiServer> http_server_;
  std::unique_ptr<LocalWorkers> local_workers_;
  absl::Mutex start_mu_;  // held by Start, so Stop waits for it to end
  absl::Notification stopping_;
  std::thread store_health_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_SERVER_SERVER_H_
