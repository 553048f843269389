// MetricsServer: serves a MetricsRegistry at GET /metrics over HTTP (with
// libmicrohttpd, on its own thread) for Prometheus to scrape, and answers
// GET /healthz with "ok".
#ifndef NPUZZLE_COMMON_METRICS_SERVER_H_
#define NPUZZLE_COMMON_METRICS_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/metrics.h"

struct MHD_Daemon;

namespace npuzzle {

class MetricsServer {
 public:
  // `listen`: "HOST:PORT" or ":PORT"; port 0 picks a free one. The
  // registry must outlive the server.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& listen,
                                                              const MetricsRegistry* registry);
  ~MetricsServer();

  int port() const { return port_; }

 private:
  MetricsServer(MHD_Daemon* daemon, int port) : daemon_(daemon), port_(port) {}

  MHD_Daemon* daemon_;
  int port_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_METRICS_SERVER_H_
