#include "service/server/forwarder.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/listen_address.h"

namespace npuzzle {
namespace {

constexpr int kConnectTimeoutMs = 2000;
constexpr size_t kChunk = 64 * 1024;

// Waits until `fd` is ready for `events` or the forwarder stops (false).
bool AwaitReady(int fd, short events, int wake, int timeout_ms = -1) {
  pollfd fds[2] = {{fd, events, 0}, {wake, POLLIN, 0}};
  for (;;) {
    const int n = poll(fds, 2, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0 && fds[1].revents == 0 && fds[0].revents != 0;
  }
}

// A non-blocking connection to "HOST:PORT", or -1.
int Dial(const std::string& target, int wake) {
  const size_t colon = target.rfind(':');
  if (colon == std::string::npos) return -1;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(target.substr(0, colon).c_str(), target.substr(colon + 1).c_str(), &hints, &found) != 0) return -1;
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const bool started = fd >= 0 && (connect(fd, found->ai_addr, found->ai_addrlen) == 0 || errno == EINPROGRESS);
  freeaddrinfo(found);
  int error = 0;
  socklen_t length = sizeof(error);
  if (!started || !AwaitReady(fd, POLLOUT, wake, kConnectTimeoutMs) ||
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

bool WriteAll(int fd, const char* data, size_t size, int wake) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= n;
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!AwaitReady(fd, POLLOUT, wake)) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Forwarder>> Forwarder::Start(const std::string& listen, int max_connections) {
  absl::StatusOr<sockaddr_in> addr = ParseListenAddress(listen, "forwarded");
  if (!addr.ok()) return addr.status();
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int reuse = 1;
  sockaddr_in bound{};
  socklen_t length = sizeof(bound);
  if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse)) != 0 ||
      bind(listener, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0 || ::listen(listener, 128) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    const int error = errno;
    if (listener >= 0) close(listener);
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen, ": ", strerror(error)));
  }
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    close(listener);
    return absl::InternalError("forwarder: no eventfd");
  }
  std::unique_ptr<Forwarder> forwarder(new Forwarder(listener, wake, ntohs(bound.sin_port), max_connections));
  forwarder->acceptor_ = std::thread([f = forwarder.get()] { f->AcceptLoop(); });
  return forwarder;
}

Forwarder::Forwarder(int listener, int wake, int port, int max_connections)
    : listener_(listener), wake_(wake), port_(port), max_connections_(max_connections) {}

Forwarder::~Forwarder() {
  const uint64_t one = 1;
  // Stays readable, as nothing reads it: every poll below sees it.
  if (write(wake_, &one, sizeof(one)) != sizeof(one)) abort();
  acceptor_.join();
  close(listener_);
  close(wake_);
}

void Forwarder::SetTarget(const std::string& target) {
  absl::MutexLock lock(&mu_);
  target_ = target;
}

// One thread a connection: a relay blocks only on its own two sockets, and
// the count of them is bounded. The acceptor joins relays as they end, and
// all of them when the forwarder stops, so none outlives it.
void Forwarder::AcceptLoop() {
  std::map<int64_t, std::thread> relays;  // by number, as descriptors are reused
  int64_t next = 0;
  std::vector<int64_t> ended;
  auto join_ended = [&] {
    {
      absl::MutexLock lock(&mu_);
      ended.swap(ended_);
    }
    for (int64_t relay : ended) {
      relays[relay].join();
      relays.erase(relay);
    }
    ended.clear();
  };
  while (AwaitReady(listener_, POLLIN, wake_, 1000) || !StopRequested()) {
    join_ended();
    const int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (client < 0) continue;
    std::string target;
    {
      absl::MutexLock lock(&mu_);
      if (connections_ >= max_connections_) {
        close(client);
        continue;
      }
      ++connections_;
      target = target_;
    }
    const int64_t relay = next++;
    relays[relay] = std::thread([this, relay, client, target] { Relay(relay, client, target); });
  }
  for (auto& [number, relay] : relays) relay.join();
}

bool Forwarder::StopRequested() const {
  pollfd fd = {wake_, POLLIN, 0};
  return poll(&fd, 1, 0) > 0;
}

void Forwarder::Relay(int64_t relay, int client, const std::string& target) {
  const int server = target.empty() ? -1 : Dial(target, wake_);
  if (server >= 0) {
    // Each direction runs until its reader sees the end; the end is passed
    // on (a half close) so the other direction may finish its last words.
    bool open[2] = {true, true};  // client to server, server to client
    const int from[2] = {client, server};
    const int to[2] = {server, client};
    std::vector<char> buffer(kChunk);
    while (open[0] || open[1]) {
      pollfd fds[3] = {{open[0] ? client : -1, POLLIN, 0}, {open[1] ? server : -1, POLLIN, 0}, {wake_, POLLIN, 0}};
      if (poll(fds, 3, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (fds[2].revents != 0) break;
      bool failed = false;
      for (int d = 0; d < 2 && !failed; ++d) {
        if (fds[d].revents == 0) continue;
        const ssize_t n = recv(from[d], buffer.data(), buffer.size(), 0);
        if (n > 0) {
          failed = !WriteAll(to[d], buffer.data(), n, wake_);
        } else if (n == 0) {
          open[d] = false;
          shutdown(to[d], SHUT_WR);
        } else if (errno != EAGAIN && errno != EINTR) {
          failed = true;
        }
      }
      if (failed) break;
    }
    close(server);
  }
  close(client);
  absl::MutexLock lock(&mu_);
  --connections_;
  ended_.push_back(relay);
}

}  // namespace npuzzle
