// HttpApiServer: the public API over HTTP/1.1 with JSON bodies, for curl
// and browsers, and the web page at "/". Routes and mappings are in
// http_mapping.h; every call goes through the same JobApi as gRPC. Watches
// stream as Server-Sent Events. libmicrohttpd gives each connection a
// thread (a watch blocks its thread while it waits for events), so the
// number of connections is capped. With TLS, the certificate files are
// re-read as the gRPC ports re-read them, and a changed pair is served to
// new connections by a fresh daemon on the same listening socket.
#ifndef NPUZZLE_SERVICE_API_HTTP_API_H_
#define NPUZZLE_SERVICE_API_HTTP_API_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/api/job_api.h"

struct MHD_Daemon;

namespace npuzzle {

class HttpApiServer {
 public:
  struct Options {
    std::string listen;    // "HOST:PORT"; port 0 picks a free one
    std::string page;      // served at "/"
    std::string tls_cert;  // PEM files; empty: plain HTTP
    std::string tls_key;
    absl::Duration tls_reload_interval = absl::Seconds(60);
    int max_connections = 512;
    // From any one address: so that one client holding connections open
    // cannot take every one.
    int max_connections_per_client = 64;
    // A connection that sends and receives nothing this long is closed
    // (an event stream sends a keep-alive well within it).
    absl::Duration idle_timeout = absl::Seconds(10);
  };

  static absl::StatusOr<std::unique_ptr<HttpApiServer>> Start(JobApi* api, Options options);
  // Ends open event streams (within a second) and stops serving.
  ~HttpApiServer() ABSL_LOCKS_EXCLUDED(mu_);

  int port() const { return port_; }

  // libmicrohttpd's callbacks reach the server through these.
  JobApi* api() const { return api_; }
  const std::string& page() const { return options_.page; }
  bool stopping() const { return stopping_.load(); }

 private:
  // One libmicrohttpd daemon and the PEM text it reads from memory it
  // does not copy (both empty: plain HTTP).
  struct Daemon {
    MHD_Daemon* daemon = nullptr;
    std::string cert;
    std::string key;
  };

  HttpApiServer(JobApi* api, Options options) : api_(api), options_(std::move(options)) {}

  // Starts `d` listening on `listen_socket`, or where Options::listen says
  // when it is -1; with no socket at all when `check_only` (to try a
  // certificate pair).
  absl::Status StartDaemon(Daemon& d, int listen_socket, bool check_only);
  // Re-reads the PEM files every tls_reload_interval until stopped.
  void ReloadLoop() ABSL_LOCKS_EXCLUDED(mu_);
  void Reload();

  JobApi* const api_;
  const Options options_;
  std::atomic<bool> stopping_{false};
  int port_ = 0;
  // The daemons are the reloader's alone while it runs: Start sets them
  // up before starting it, the destructor stops them after joining it.
  std::unique_ptr<Daemon> serving_;
  // Replaced by a reload: no longer accepting, their open connections
  // (event streams) run on until they end or the server stops.
  std::vector<std::unique_ptr<Daemon>> retired_;
  // The PEM text of the last refused change, so it is reported once.
  std::string refused_;
  absl::Mutex mu_;
  bool stop_reloading_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reloader_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_HTTP_API_H_
