// HttpAcceptor: the HTTP API's listening socket, in front of
// libmicrohttpd. libmicrohttpd gives each connection a thread and counts
// it against the connection limits from the moment it is accepted, so
// sockets that are opened and left idle (no request, no TLS handshake)
// could hold every slot. Here the kernel holds a new connection back
// until the client sends its first bytes (TCP_DEFER_ACCEPT), and one that
// still has sent nothing when the kernel gives it up is closed at once.
// Idle sockets thus cost no thread and count against no limit; only a
// connection that has begun its request (or handshake) reaches the daemon,
// whose per-client and total limits and idle timeout then apply.
#ifndef NPUZZLE_SERVICE_API_HTTP_ACCEPTOR_H_
#define NPUZZLE_SERVICE_API_HTTP_ACCEPTOR_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <functional>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace npuzzle {

class HttpAcceptor {
 public:
  // Takes a connection that has sent bytes; it owns the socket from then.
  using Hand = std::function<void(int fd, const sockaddr* address, socklen_t length)>;

  // Listens on `address`; a connection is held back for up to
  // `first_bytes_within` for its first bytes.
  static absl::StatusOr<std::unique_ptr<HttpAcceptor>> Start(const sockaddr_in& address,
                                                             absl::Duration first_bytes_within, Hand hand);
  ~HttpAcceptor();  // stops accepting and closes the listening socket
  HttpAcceptor(const HttpAcceptor&) = delete;
  HttpAcceptor& operator=(const HttpAcceptor&) = delete;

  int port() const { return port_; }

 private:
  HttpAcceptor(int listen_fd, int stop_fd, int port, Hand hand)
      : listen_fd_(listen_fd), stop_fd_(stop_fd), port_(port), hand_(std::move(hand)) {}
  void Loop();

  const int listen_fd_;
  const int stop_fd_;  // an eventfd: written to stop the loop
  const int port_;
  const Hand hand_;
  std::thread thread_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_HTTP_ACCEPTOR_H_
