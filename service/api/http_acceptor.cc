#include "service/api/http_acceptor.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"

namespace npuzzle {
namespace {

// As much of a request as is looked at for its header's end: a header
// longer than this goes on to the daemon, which refuses it.
constexpr size_t kHeaderPeekBytes = 8192;
// How long to wait before accepting again when out of descriptors.
constexpr absl::Duration kBusyPause = absl::Milliseconds(10);
// The first byte of a TLS record carrying a handshake, and the size of a
// record's header (type, version, length).
constexpr unsigned char kTlsHandshake = 0x16;
constexpr size_t kTlsRecordHeaderBytes = 5;

constexpr absl::string_view kTimedOut =
    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

// Whether `seen`, the first bytes of a connection (at most `room`), hold
// its first message whole: a plaintext request's header, or a TLS
// client's first handshake record (the ClientHello), whose length is in
// its header. The daemon takes it from there: a TLS client that stops
// before its ClientHello is whole never reaches it or its limits.
bool Whole(absl::string_view seen, size_t room) {
  if (seen.size() == room) return true;
  if (static_cast<unsigned char>(seen[0]) != kTlsHandshake) return seen.find("\r\n\r\n") != seen.npos;
  if (seen.size() < kTlsRecordHeaderBytes) return false;
  const size_t record = static_cast<unsigned char>(seen[3]) << 8 | static_cast<unsigned char>(seen[4]);
  return seen.size() >= kTlsRecordHeaderBytes + record;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpAcceptor>> HttpAcceptor::Start(const sockaddr_in& address,
                                                                  absl::Duration first_bytes_within,
                                                                  absl::Duration header_within, Hand hand) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", strerror(errno)));
  const int on = 1;
  const int defer_seconds = static_cast<int>(std::max<int64_t>(1, absl::ToInt64Seconds(first_bytes_within)));
  sockaddr_in bound = address;
  socklen_t length = sizeof bound;
  // The backlog is the kernel's cap (somaxconn): connections wait there for
  // the accept thread, which takes them as fast as they come.
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_seconds, sizeof defer_seconds) != 0 ||
      bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    const std::string why = strerror(errno);
    close(fd);
    return absl::UnavailableError(why);
  }
  const int stop = eventfd(0, EFD_CLOEXEC);
  if (stop < 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("eventfd: ", strerror(errno)));
  }
  std::unique_ptr<HttpAcceptor> acceptor(
      new HttpAcceptor(fd, stop, ntohs(bound.sin_port), header_within, std::move(hand)));
  acceptor->thread_ = std::thread([a = acceptor.get()] { a->Loop(); });
  return acceptor;
}

HttpAcceptor::~HttpAcceptor() {
  const uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  close(stop_fd_);
}

HttpAcceptor::Verdict HttpAcceptor::Look(int fd, const sockaddr_storage& peer, socklen_t length, bool fresh) {
  char peeked[kHeaderPeekBytes];
  const ssize_t n = recv(fd, peeked, sizeof peeked, MSG_PEEK | MSG_DONTWAIT);
  // The kernel lets a connection through once it has bytes, or once the
  // deferral is over: a fresh one without any never sent a byte.
  if (n == 0 || (n < 0 && (errno != EAGAIN || fresh))) {
    close(fd);
    return Verdict::kClosed;
  }
  if (n < 0) return Verdict::kWaiting;
  const absl::string_view seen(peeked, static_cast<size_t>(n));
  if (!Whole(seen, sizeof peeked)) return Verdict::kWaiting;
  hand_(fd, reinterpret_cast<const sockaddr*>(&peer), length);
  return Verdict::kHanded;
}

void HttpAcceptor::Loop() {
  const int epoll = epoll_create1(EPOLL_CLOEXEC);
  if (epoll < 0) return;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = listen_fd_;
  epoll_ctl(epoll, EPOLL_CTL_ADD, listen_fd_, &event);
  event.data.fd = stop_fd_;
  epoll_ctl(epoll, EPOLL_CTL_ADD, stop_fd_, &event);
  std::map<int, Waiting> waiting;
  // Deadlines are arrival plus a constant, so arrival order is their order;
  // a descriptor closed and reused meanwhile is told apart by its deadline.
  std::deque<std::pair<absl::Time, int>> by_deadline;
  auto forget = [&](int fd) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
    waiting.erase(fd);
  };
  for (bool stopping = false; !stopping;) {
    const absl::Time now = absl::Now();
    while (!by_deadline.empty() && (by_deadline.front().first <= now || waiting.size() > kMaxWaiting)) {
      const auto [deadline, fd] = by_deadline.front();
      by_deadline.pop_front();
      auto it = waiting.find(fd);
      if (it == waiting.end() || it->second.deadline != deadline) continue;
      // A 408 for a plaintext request; a TLS client would not understand one.
      unsigned char first = 0;
      if (recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT) == 1 && first != kTlsHandshake) {
        (void)!send(fd, kTimedOut.data(), kTimedOut.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      forget(fd);
      close(fd);
    }
    const int timeout_ms =
        by_deadline.empty() ? -1 : static_cast<int>(absl::ToInt64Milliseconds(by_deadline.front().first - now)) + 1;
    epoll_event ready[64];
    const int n = epoll_wait(epoll, ready, 64, timeout_ms);
    for (int i = 0; i < n; ++i) {
      const int fd = ready[i].data.fd;
      if (fd == stop_fd_) {
        stopping = true;
      } else if (fd == listen_fd_) {
        for (;;) {
          sockaddr_storage peer{};
          socklen_t length = sizeof peer;
          const int accepted = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_CLOEXEC);
          if (accepted < 0) {
            // Out of descriptors or memory, the listening socket stays
            // readable: a pause, not a spin, until others close.
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) absl::SleepFor(kBusyPause);
            break;
          }
          if (Look(accepted, peer, length, /*fresh=*/true) != Verdict::kWaiting) continue;
          const absl::Time deadline = absl::Now() + header_within_;
          waiting[accepted] = {peer, length, deadline};
          by_deadline.emplace_back(deadline, accepted);
          // Edge-triggered: the bytes already read ahead stay in the
          // socket, so only new ones must wake the loop.
          epoll_event more{};
          more.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
          more.data.fd = accepted;
          epoll_ctl(epoll, EPOLL_CTL_ADD, accepted, &more);
        }
      } else if (auto it = waiting.find(fd); it != waiting.end()) {
        const Waiting w = it->second;
        // Out of the set first: the daemon owns it once handed on.
        epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
        const Verdict verdict = Look(fd, w.peer, w.length, /*fresh=*/false);
        if (verdict == Verdict::kWaiting) {
          epoll_event more{};
          more.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
          more.data.fd = fd;
          epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &more);
        } else {
          waiting.erase(fd);
        }
      }
    }
  }
  for (const auto& [fd, w] : waiting) close(fd);
  close(epoll);
}

}  // namespace npuzzle
