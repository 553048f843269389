#include "service/server/server.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "common/port_file.h"
#include "common/tls.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "service/api/web_page.h"
#include "service/store/open_store.h"
#include "service/store/sqlite_job_store.h"

namespace npuzzle {
namespace {

constexpr absl::Duration kLocalWorkerStop = absl::Seconds(5);
constexpr absl::Duration kStoreCheckInterval = absl::Seconds(1);
constexpr absl::Duration kStoreCheckWait = absl::Milliseconds(500);
// Each a thread while it lasts; well above a fleet's workers and watchers.
constexpr int kMaxForwardedConnections = 4096;

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

}  // namespace

absl::Status Server::Backup(const ServerConfig& config) {
  const std::string from = (config.backup_data_dir.empty() ? config.data_dir : config.backup_data_dir) + "/jobs.db";
  if (absl::Status s = SqliteJobStore::Backup(from, config.backup_to); !s.ok()) return s;
  Log(absl::StrCat("copied ", from, " to ", config.backup_to));
  return absl::OkStatus();
}

Server::~Server() { Stop(); }

absl::Status Server::Start() {
  absl::MutexLock starting(&start_mu_);
  // First, as a standby may wait in OpenStore for hours: its probes get
  // answers meanwhile (alive, not ready) and its metrics say it waits.
  if (absl::Status s = ServeMetrics(); !s.ok()) return s;
  standing_by_->Set(config_.standby ? 1 : 0);
  if (absl::Status s = StartForwarding(); !s.ok()) return s;
  absl::Status opened = OpenStore();
  // Its ports are this coordinator's own from here on.
  forwarders_.clear();
  ready_.store(false);
  standing_by_->Set(0);
  if (!opened.ok()) return opened;
  if (!config_.auth_tokens.empty()) {
    absl::StatusOr<std::unique_ptr<TokenBook>> opened =
        TokenBook::Open(config_.auth_tokens, absl::Seconds(config_.tls_reload_interval_s));
    if (!opened.ok()) return opened.status();
    tokens_ = *std::move(opened);
    if (config_.tls_cert.empty())
      Log("WARNING: --auth-tokens without --tls-cert: tokens cross the network in the clear");
  } else {
    Log("WARNING: no --auth-tokens: every client may submit, read and cancel every job");
  }
  ManagerOptions options = config_.Manager();
  options.quota_of = [this, quota = config_.DefaultQuota()](const std::string& tenant) {
    return tokens_ ? tokens_->QuotaOf(tenant, quota) : quota;
  };
  manager_ = std::make_unique<JobManager>(store_.get(), std::move(options));
  if (absl::Status s = manager_->Start(); !s.ok()) return s;
  shown_manager_.store(manager_.get());
  cleaner_ = std::make_unique<JobCleaner>(store_.get(), JobCleaner::Options{.retain = config_.retain});
  cleaner_->Start(
      [](int deleted) { Log(absl::StrCat("retention: deleted ", deleted, " finished jobs past their retention")); });
  api_ = std::make_unique<JobApi>(manager_.get(), tokens_.get(), store_->Secret());
  if (absl::Status s = Listen(); !s.ok()) return s;
  if (absl::Status s = ServeHttp(); !s.ok()) return s;
  SetHealth(true);
  const int metrics_port = metrics_server_ ? metrics_server_->port() : 0;
  const int http_port = http_server_ ? http_server_->port() : 0;
  if (!config_.advertise_host.empty()) {
    const std::string& host = config_.advertise_host;
    std::string addresses = absl::StrCat("client=", host, ":", client_port_, " worker=", host, ":", worker_port_);
    if (http_port != 0) absl::StrAppend(&addresses, " http=", host, ":", http_port);
    // Without it standbys cannot forward, but this one serves all the same.
    if (absl::Status s = store_->Advertise(addresses); !s.ok()) Log(absl::StrCat("WARNING: ", s.message()));
  }
  Log(absl::StrCat("serving clients on port ", client_port_, ", workers on port ", worker_port_, ", metrics on port ",
                   metrics_port, ", HTTP on port ", http_port, ", data in ", config_.data_dir));
  if (!config_.port_file.empty()) {
    WritePortFile(config_.port_file,
                  absl::StrCat(client_port_, " ", worker_port_, " ", metrics_port, " ", http_port, "\n"));
  }
  local_workers_ = std::make_unique<LocalWorkers>(LocalWorkers::Command(config_, worker_port_, local_worker_tls_flags_),
                                                  config_.local_workers);
  if (config_.local_workers > 0) {
    local_workers_->Start();
    Log(absl::StrCat("started ", config_.local_workers, " local worker", config_.local_workers == 1 ? "" : "s"));
  }
  store_health_ = std::thread([this] { WatchStore(); });
  return absl::OkStatus();
}

absl::Status Server::OpenStore() {
  std::error_code error;
  std::filesystem::create_directories(config_.data_dir, error);
  absl::StatusOr<std::unique_ptr<DataDirLock>> lock = DataDirLock::Acquire(config_.data_dir);
  if (!lock.ok()) return lock.status();
  lock_ = *std::move(lock);
  std::string uri = config_.store;
  if (!config_.store_file.empty()) {
    std::ifstream file(config_.store_file);
    if (!file) return absl::InvalidArgumentError(absl::StrCat("--store-file ", config_.store_file, ": cannot read it"));
    std::getline(file, uri);
    uri = std::string(absl::StripAsciiWhitespace(uri));
  }
  const StandbyWait standby{.stop = &stopping_,
                            .on_active = [this](const std::string& addresses) { ForwardTo(addresses); }};
  absl::StatusOr<std::unique_ptr<JobStore>> store =
      OpenJobStore(uri, config_.JobStorePath(), config_.store_full_sync, config_.standby ? &standby : nullptr);
  if (!store.ok()) return store.status();
  store_ = *std::move(store);
  Log(absl::StrCat("job store: ", uri.empty() ? config_.JobStorePath() : ShownStore(uri)));
  return absl::OkStatus();
}

absl::Status Server::StartForwarding() {
  if (!config_.standby || config_.advertise_host.empty()) return absl::OkStatus();
  for (const auto& [role, listen] : {std::pair<std::string, std::string>{"client", config_.listen},
                                     {"worker", config_.worker_listen},
                                     {"http", config_.http_listen}}) {
    if (listen.empty()) continue;
    absl::StatusOr<std::unique_ptr<Forwarder>> started = Forwarder::Start(listen, kMaxForwardedConnections);
    if (!started.ok()) return started.status();
    forwarders_[role] = *std::move(started);
  }
  return absl::OkStatus();
}

// `addresses`: "client=HOST:PORT worker=HOST:PORT http=HOST:PORT". A port
// with no address to go to refuses connections until it has one; a standby
// is ready once the active coordinator it forwards to is known.
void Server::ForwardTo(const std::string& addresses) {
  std::map<std::string, std::string> targets;
  for (absl::string_view part : absl::StrSplit(addresses, ' ', absl::SkipEmpty())) {
    targets.insert(std::pair<std::string, std::string>(absl::StrSplit(part, absl::MaxSplits('=', 1))));
  }
  ready_.store(!forwarders_.empty() && targets.count("client") > 0);
  for (const auto& [role, forwarder] : forwarders_) {
    const auto target = targets.find(role);
    forwarder->SetTarget(target == targets.end() ? "" : target->second);
  }
  Log(addresses.empty() ? std::string("standing by: no active coordinator known to forward to")
                        : absl::StrCat("standing by: forwarding to the active coordinator (", addresses, ")"));
}

absl::Status Server::Listen() {
  ServerTls tls{config_.tls_cert, config_.tls_key, "", absl::Seconds(config_.tls_reload_interval_s)};
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> client_credentials = MakeServerCredentials(tls);
  if (!client_credentials.ok()) return client_credentials.status();
  tls.client_ca_file = config_.worker_client_ca;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> worker_credentials = MakeServerCredentials(tls);
  if (!worker_credentials.ok()) return worker_credentials.status();
  // Set even when empty: a worker would otherwise read its TLS settings
  // from the server's own NPUZZLE_TLS_* environment.
  local_worker_tls_flags_ = {"--tls-ca=" + config_.local_worker_tls_ca, "--tls-cert=" + config_.local_worker_tls_cert,
                             "--tls-key=" + config_.local_worker_tls_key,
                             std::string("--tls-server-name=") + (tls.enabled() ? "localhost" : "")};
  if (!tls.enabled()) {
    Log("WARNING: plaintext: the client and worker ports are unencrypted and unauthenticated "
        "(see --tls-cert, --tls-key, --worker-client-ca)");
  } else if (tls.client_ca_file.empty()) {
    Log("WARNING: the worker port admits any worker (see --worker-client-ca)");
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  solver_ = std::make_unique<SolverServiceImpl>(api_.get());
  workers_ = std::make_unique<WorkerServiceImpl>(manager_.get());
  if (config_.worker_listen.empty()) {
    client_server_ = Serve(config_.listen, {solver_.get(), workers_.get()}, *client_credentials, &client_port_);
    worker_port_ = client_port_;
  } else {
    client_server_ = Serve(config_.listen, {solver_.get()}, *client_credentials, &client_port_);
    worker_server_ = Serve(config_.worker_listen, {workers_.get()}, *worker_credentials, &worker_port_);
  }
  if (client_server_ == nullptr || client_port_ == 0 || (!config_.worker_listen.empty() && worker_port_ == 0)) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config_.listen, " / ", config_.worker_listen));
  }
  return absl::OkStatus();
}

absl::Status Server::ServeMetrics() {
  standing_by_ = role_metrics_.AddGauge(
      "npuzzle_coordinator_standing_by",
      "1 while this coordinator is a standby waiting for the database the active coordinator has");
  if (config_.metrics_listen.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<MetricsServer>> started =
      MetricsServer::Start(config_.metrics_listen, {[this] {
                                                      std::string text = role_metrics_.Render();
                                                      const JobManager* manager = shown_manager_.load();
                                                      if (manager != nullptr) text += manager->metrics().Render();
                                                      return text;
                                                    },
                                                    [this] { return ready_.load(); }});
  if (!started.ok()) return started.status();
  metrics_server_ = *std::move(started);
  return absl::OkStatus();
}

absl::Status Server::ServeHttp() {
  if (!config_.http_listen.empty()) {
    absl::StatusOr<std::unique_ptr<HttpApiServer>> started =
        HttpApiServer::Start(api_.get(), {.listen = config_.http_listen,
                                          .page = WebPage(),
                                          .tls_cert = config_.tls_cert,
                                          .tls_key = config_.tls_key,
                                          .tls_reload_interval = absl::Seconds(config_.tls_reload_interval_s),
                                          .max_connections = config_.http_max_connections,
                                          .max_connections_per_client = config_.http_max_connections_per_client});
    if (!started.ok()) return started.status();
    http_server_ = *std::move(started);
  }
  return absl::OkStatus();
}

// Health for the whole server ("") and each service by name, as probes and
// generic tools ask for either; the metrics listener's /readyz mirrors it
// (Kubernetes' gRPC probes cannot reach a TLS port).
void Server::SetHealth(bool serving) {
  ready_.store(serving);
  for (grpc::Server* s : {client_server_.get(), worker_server_.get()}) {
    if (s == nullptr) continue;
    grpc::HealthCheckServiceInterface* health = s->GetHealthCheckService();
    health->SetServingStatus(serving);
    for (const char* name : {"npuzzle.v1.SolverService", "npuzzle.v1.WorkerService"}) {
      health->SetServingStatus(name, serving);
    }
  }
}

// NOT_SERVING while a write cannot commit (disk full, file locked by another
// process, I/O errors), so probes and load balancers send no one to a
// server that cannot accept a job.
void Server::WatchStore() {
  bool serving = true;
  while (!stopping_.WaitForNotificationWithTimeout(kStoreCheckInterval)) {
    const absl::Status writable = store_->CheckWritable(kStoreCheckWait);
    if (absl::IsFailedPrecondition(writable)) {
      // Another coordinator (a standby) has the database, and with it the
      // jobs: this one stops as on SIGTERM, its workers going over.
      Log(absl::StrCat(writable.message(), ": stopping"));
      kill(getpid(), SIGTERM);
      return;
    }
    if (writable.ok() == serving || stopping_.HasBeenNotified()) continue;
    serving = writable.ok();
    SetHealth(serving);
    Log(serving ? std::string("the job store is writable again: SERVING")
                : absl::StrCat("the job store cannot be written (", writable.message(), "): NOT_SERVING"));
  }
}

void Server::Stop() {
  if (stopping_.HasBeenNotified()) return;
  stopping_.Notify();
  // Wakes a standby's wait; then whatever Start put up comes down.
  absl::MutexLock started(&start_mu_);
  if (store_health_.joinable()) store_health_.join();
  SetHealth(false);
  if (manager_) manager_->Drain(absl::Milliseconds(config_.drain_grace_ms));
  // Close the doors before stopping local workers, so they cannot dial in
  // again and take work back.
  http_server_.reset();
  for (grpc::Server* s : {client_server_.get(), worker_server_.get()}) {
    if (s != nullptr) s->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
  if (local_workers_) local_workers_->Stop(kLocalWorkerStop);
  metrics_server_.reset();
}

}  // namespace npuzzle
