// Scraping metrics from tests: a plain HTTP/1.0 GET over loopback, and
// reading one series' value out of Prometheus text.
#ifndef NPUZZLE_TESTS_HTTP_GET_H_
#define NPUZZLE_TESTS_HTTP_GET_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace npuzzle::testing {

struct HttpResponse {
  int code = 0;
  std::string content_type;
  std::string body;
};

absl::StatusOr<HttpResponse> HttpGet(const std::string& ipv4, int port, const std::string& path);

// The value of `series` (a name with its labels exactly as rendered, e.g.
// `npuzzle_jobs{state="done"}`), or nullopt if it is not there.
std::optional<double> MetricValue(const std::string& exposition, const std::string& series);

}  // namespace npuzzle::testing

#endif  // NPUZZLE_TESTS_HTTP_GET_H_
