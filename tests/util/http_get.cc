#include "tests/util/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npuzzle::testing {

absl::StatusOr<int> ConnectTcp(const std::string& ipv4, int port, absl::Duration timeout) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  const timeval limit = absl::ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, ipv4.c_str(), &addr.sin_addr);
  int error = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 ? 0 : errno;
  if (error == EINTR) {
    // An interrupted connect carries on in the background; wait for it.
    pollfd ready{.fd = fd, .events = POLLOUT, .revents = 0};
    const absl::Time deadline = absl::Now() + timeout;
    int polled;
    do {
      // Never negative: poll would take that as "wait forever".
      const int64_t left_ms = std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now()));
      polled = poll(&ready, 1, static_cast<int>(left_ms));
    } while (polled < 0 && errno == EINTR);
    socklen_t size = sizeof error;
    if (polled == 1) {
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
    } else {
      error = polled == 0 ? ETIMEDOUT : errno;
    }
  }
  if (error != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to ", ipv4, ":", port, ": ", std::strerror(error)));
  }
  return fd;
}

absl::Status SendAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadUntilClosed(int fd) {
  std::string raw;
  char buf[8192];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0) return raw;
    if (n > 0) {
      raw.append(buf, static_cast<size_t>(n));
    } else if (errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("read after ", raw.size(), " bytes: ", std::strerror(errno)));
    }
  }
}

absl::StatusOr<HttpResponse> HttpGet(const std::string& ipv4, int port, const std::string& path) {
  return HttpRequest(ipv4, port, "GET", path);
}

absl::StatusOr<HttpResponse> HttpRequest(const std::string& ipv4, int port, const std::string& method,
                                         const std::string& path, const std::string& body, const std::string& headers) {
  absl::StatusOr<int> fd = ConnectTcp(ipv4, port, absl::Seconds(30));
  if (!fd.ok()) return fd.status();
  const std::string length =
      body.empty() && method == "GET" ? "" : absl::StrCat("Content-Length: ", body.size(), "\r\n");
  absl::Status sent =
      SendAll(*fd, absl::StrCat(method, " ", path, " HTTP/1.0\r\nHost: ", ipv4, "\r\n", length, headers, "\r\n", body));
  absl::StatusOr<std::string> read = sent.ok() ? ReadUntilClosed(*fd) : sent;
  close(*fd);
  if (!read.ok()) return read.status();
  const std::string& raw = *read;
  const size_t header_end = raw.find("\r\n\r\n");
  if (header_end == std::string::npos) return absl::DataLossError("no complete HTTP response: " + raw);
  HttpResponse response;
  response.headers = raw.substr(0, header_end);
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
