#include "tests/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npuzzle::testing {

absl::StatusOr<HttpResponse> HttpGet(const std::string& ipv4, int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  timeval timeout{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, ipv4.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to ", ipv4, ":", port));
  }
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", ipv4, "\r\n\r\n");
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("write failed");
  }
  std::string raw;
  char buf[8192];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) raw.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t header_end = raw.find("\r\n\r\n");
  if (header_end == std::string::npos) return absl::DataLossError("no complete HTTP response: " + raw);
  HttpResponse response;
  response.body = raw.substr(header_end + 4);
  std::vector<std::string> lines = absl::StrSplit(raw.substr(0, header_end), "\r\n");
  std::vector<std::string> status = absl::StrSplit(lines[0], ' ');
  if (status.size() < 2 || !absl::SimpleAtoi(status[1], &response.code)) {
    return absl::DataLossError("bad status line: " + lines[0]);
  }
  for (const std::string& line : lines) {
    if (absl::StartsWithIgnoreCase(line, "content-type:")) response.content_type = line.substr(line.find(':') + 2);
  }
  return response;
}

std::optional<double> MetricValue(const std::string& exposition, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (!absl::StartsWith(line, series) || line.size() <= series.size() || line[series.size()] != ' ') continue;
    return std::strtod(std::string(line.substr(series.size() + 1)).c_str(), nullptr);
  }
  return std::nullopt;
}

}  // namespace npuzzle::testing
