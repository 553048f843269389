// HttpApiServer: the public API over HTTP/1.1 with JSON bodies, for curl
// and browsers, and the web page at "/". Routes and mappings are in
// http_mapping.h; every call goes through the same JobApi as gRPC. Watches
// stream as Server-Sent Events. libmicrohttpd gives each connection a
// thread (a watch blocks its thread while it waits for events), so the
// number of connections is capped; connections reach it from an
// HttpAcceptor, which keeps idle sockets out of that count. With TLS, the
// certificate files are re-read as the gRPC ports re-read them, and a
// changed pair is served to new connections by a fresh daemon.
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
#include "service/api/http_acceptor.h"
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
    // A plaintext request's header must come whole within this of its
    // first byte (else 408), and a body within this of its header (else
    // the connection is closed), however steadily they trickle.
    absl::Duration header_timeout = absl::Seconds(5);
    absl::Duration body_timeout = absl::Seconds(10);
  };

  static absl::StatusOr<std::unique_ptr<HttpApiServer>> Start(JobApi* api, Options options);
  // Ends open event streams (within a second) and stops serving.
  ~HttpApiServer() ABSL_LOCKS_EXCLUDED(mu_);

  int port() const { return acceptor_->port(); }

  // libmicrohttpd's callbacks reach the server through these.
  JobApi* api() const { return api_; }
  const std::string& page() const { return options_.page; }
  bool stopping() const { return stopping_.load(); }
  absl::Duration body_timeout() const { return options_.body_timeout; }

 private:
  // One libmicrohttpd daemon and the PEM text it reads from memory it
  // does not copy (both empty: plain HTTP).
  struct Daemon {
    MHD_Daemon* daemon = nullptr;
    std::string cert;
    std::string key;
  };

  HttpApiServer(JobApi* api, Options options) : api_(api), options_(std::move(options)) {}

  // Starts `d`, which takes its connections from the acceptor (or, when
  // `check_only`, none: to try a certificate pair).
  absl::Status StartDaemon(Daemon& d, bool check_only);
  // The acceptor's hand: the connection goes to the daemon serving now.
  void Take(int fd, const sockaddr* address, socklen_t length) ABSL_LOCKS_EXCLUDED(serving_mu_);
  // Re-reads the PEM files every tls_reload_interval until stopped.
  void ReloadLoop() ABSL_LOCKS_EXCLUDED(mu_);
  void Reload();

  JobApi* const api_;
  const Options options_;
  std::atomic<bool> stopping_{false};
  // The daemon new connections go to. The reloader replaces it (under
  // serving_mu_, which the acceptor reads it under) and the destructor
  // stops the daemons once the acceptor and the reloader have stopped.
  absl::Mutex serving_mu_;
  std::unique_ptr<Daemon> serving_ ABSL_GUARDED_BY(serving_mu_);
  // Replaced by a reload: no longer accepting, their open connections
  // (event streams) run on until they end or the server stops.
  std::vector<std::unique_ptr<Daemon>> retired_;
  // The PEM text of the last refused change, so it is reported once.
  std::string refused_;
  absl::Mutex mu_;
  bool stop_reloading_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reloader_;
  std::unique_ptr<HttpAcceptor> acceptor_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_HTTP_API_H_
