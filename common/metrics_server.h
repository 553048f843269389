// MetricsServer: serves Metrics at GET /metrics over HTTP (with
// libmicrohttpd, on its own thread) for Prometheus to scrape, answers
// GET /healthz with "ok" while the process runs, and GET /readyz with 200
// or 503 as the program says it is ready. Kubernetes probes use these
// where they cannot use gRPC health checks (its gRPC probes speak no TLS).
#ifndef NPUZZLE_COMMON_METRICS_SERVER_H_
#define NPUZZLE_COMMON_METRICS_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/metrics.h"

struct MHD_Daemon;

namespace npuzzle {

class MetricsServer {
 public:
  // What the server serves, called on its thread: `metrics` renders the
  // exposition text (Metrics::Render); `ready` unset: always.
  struct Endpoints {
    std::function<std::string()> metrics;
    std::function<bool()> ready;
  };

  // `listen`: "HOST:PORT" or ":PORT"; port 0 picks a free one.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& listen, Endpoints endpoints);
  ~MetricsServer();

  int port() const { return port_; }

 private:
  explicit MetricsServer(Endpoints endpoints) : endpoints_(std::move(endpoints)) {}

  const Endpoints endpoints_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_METRICS_SERVER_H_
