// Scraping metrics from tests: a plain HTTP/1.0 GET over loopback, and
// reading one series' value out of Prometheus text.
#ifndef NPUZZLE_TESTS_UTIL_HTTP_GET_H_
#define NPUZZLE_TESTS_UTIL_HTTP_GET_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace npuzzle::testing {

struct HttpResponse {
  int code = 0;
  std::string content_type;
  std::string headers;  // the raw header lines
  std::string body;
};

absl::StatusOr<HttpResponse> HttpGet(const std::string& ipv4, int port, const std::string& path);
// Any method, with a body and extra header lines ("Name: value\r\n" each).
// HTTP/1.0, so the server closes the connection when the answer (or an
// event stream) ends.
absl::StatusOr<HttpResponse> HttpRequest(const std::string& ipv4, int port, const std::string& method,
                                         const std::string& path, const std::string& body = "",
                                         const std::string& headers = "");

// The pieces HttpGet is made of, for tests that send other bytes. Every
// call retries when a signal interrupts it (libFuzzer's timer sends one
// every second), so only the peer or `timeout` can make it fail.
absl::StatusOr<int> ConnectTcp(const std::string& ipv4, int port, absl::Duration timeout);
absl::Status SendAll(int fd, absl::string_view bytes);
// Everything the peer sends until it closes the connection.
absl::StatusOr<std::string> ReadUntilClosed(int fd);

// The value of `series` (a name with its labels exactly as rendered, e.g.
// `npuzzle_jobs{state="done"}`), or nullopt if it is not there.
std::optional<double> MetricValue(const std::string& exposition, const std::string& series);

}  // namespace npuzzle::testing

#endif  // NPUZZLE_TESTS_UTIL_HTTP_GET_H_
