// The HTTP endpoint every npuzzle process serves (/metrics, /healthz):
// any bytes a peer sends, as a request, must leave the server answering
// the next scrape correctly.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/metrics.h"
#include "common/metrics_server.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/util/http_get.h"

namespace npuzzle {
namespace {

struct Fixture {
  Metrics registry;
  std::unique_ptr<MetricsServer> server;
};

Fixture& TheFixture() {
  static Fixture* f = [] {
    auto* fixture = new Fixture;
    fixture->registry.AddCounter("npuzzle_fuzz_total", "inputs sent", {{"kind", "raw"}})->Increment();
    fixture->registry.AddHistogram("npuzzle_fuzz_seconds", "times", ExponentialBuckets(0.001, 2, 4))->Observe(0.01);
    absl::StatusOr<std::unique_ptr<MetricsServer>> server =
        MetricsServer::Start("127.0.0.1:0", {[fixture] { return fixture->registry.Render(); }, nullptr});
    FUZZ_CHECK(server.ok(), "%s", server.status().ToString().c_str());
    fixture->server = *std::move(server);
    return fixture;
  }();
  return *f;
}

// Sends `bytes` as one connection's whole request and reads what comes
// back, waiting at most 200 ms. The server may close at any point, so
// failures are expected; only the next scrape is checked.
void Send(int port, const uint8_t* data, size_t size) {
  absl::StatusOr<int> fd = testing::ConnectTcp("127.0.0.1", port, absl::Milliseconds(200));
  if (!fd.ok()) return;
  if (testing::SendAll(*fd, absl::string_view(reinterpret_cast<const char*>(data), size)).ok()) {
    shutdown(*fd, SHUT_WR);
    (void)testing::ReadUntilClosed(*fd);
  }
  close(*fd);
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
