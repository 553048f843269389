#include "service/api/http_acceptor.h"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace npuzzle {

absl::StatusOr<std::unique_ptr<HttpAcceptor>> HttpAcceptor::Start(const sockaddr_in& address,
                                                                  absl::Duration first_bytes_within, Hand hand) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
  std::unique_ptr<HttpAcceptor> acceptor(new HttpAcceptor(fd, stop, ntohs(bound.sin_port), std::move(hand)));
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

void HttpAcceptor::Loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors or memory: give the others a moment to go.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) poll(nullptr, 0, 10);
      continue;
    }
    // The kernel lets a connection through once it has bytes, or once the
    // deferral is over: then it has none, and never had any.
    char byte;
    if (recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) {
      close(fd);
      continue;
    }
    hand_(fd, reinterpret_cast<const sockaddr*>(&peer), length);
  }
}

}  // namespace npuzzle
