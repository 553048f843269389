// The HTTP endpoint every npuzzle process serves (/metrics, /healthz):
// any bytes a peer sends, as a request, must leave the server answering
// the next scrape correctly.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/metrics.h"
#include "common/metrics_server.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/http_get.h"

namespace npuzzle {
namespace {

struct Fixture {
  MetricsRegistry registry;
  std::unique_ptr<MetricsServer> server;
};

Fixture& TheFixture() {
  static Fixture* f = [] {
    auto* fixture = new Fixture;
    fixture->registry.AddCounter("npuzzle_fuzz_total", "inputs sent", {{"kind", "raw"}})->Increment();
    fixture->registry.AddHistogram("npuzzle_fuzz_seconds", "times", ExponentialBuckets(0.001, 2, 4))->Observe(0.01);
    absl::StatusOr<std::unique_ptr<MetricsServer>> server = MetricsServer::Start("127.0.0.1:0", &fixture->registry);
    FUZZ_CHECK(server.ok(), "%s", server.status().ToString().c_str());
    fixture->server = *std::move(server);
    return fixture;
  }();
  return *f;
}

// Sends `bytes` as one connection's whole request and reads what comes
// back, waiting at most 200 ms.
void Send(int port, const uint8_t* data, size_t size) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  FUZZ_CHECK(fd >= 0, "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{0, 200000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    (void)!send(fd, data, size, MSG_NOSIGNAL);  // the server may have closed already
    shutdown(fd, SHUT_WR);
    char buffer[4096];
    while (read(fd, buffer, sizeof buffer) > 0) {
    }
  }
  close(fd);
}

}  // namespace
}  // namespace npuzzle

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuzzle;
  Fixture& f = TheFixture();
  Send(f.server->port(), data, std::min<size_t>(size, 16384));
  absl::StatusOr<testing::HttpResponse> scrape = testing::HttpGet("127.0.0.1", f.server->port(), "/metrics");
  FUZZ_CHECK(scrape.ok() && scrape->code == 200, "the next scrape failed: %s",
             scrape.ok() ? std::to_string(scrape->code).c_str() : scrape.status().ToString().c_str());
  FUZZ_CHECK(testing::MetricValue(scrape->body, "npuzzle_fuzz_total{kind=\"raw\"}") == 1, "the scrape is wrong");
  return 0;
}
