// HttpAcceptor: the HTTP API's listening socket, in front of
// libmicrohttpd. libmicrohttpd gives each connection a thread and counts
// it against the connection limits from the moment it is accepted, so
// sockets that are opened and left idle (no request, no TLS handshake)
// could hold every slot, and a client trickling its request a byte at a
// time keeps its slot however long it likes. Here:
//   - the kernel holds a new connection back until the client sends its
//     first bytes (TCP_DEFER_ACCEPT), and one that still has sent nothing
//     when the kernel gives it up is closed at once;
//   - a plaintext request waits here, on one epoll set and no thread,
//     until its whole header has come (read ahead without consuming it,
//     MSG_PEEK), and is answered 408 and closed if that takes longer than
//     the header deadline; a TLS connection waits the same way for its
//     whole first handshake record, the ClientHello (the record's header
//     gives its length), and is closed if that takes longer.
// Idle and slow sockets thus cost no thread and count against no limit;
// only a connection with a whole request header (or ClientHello) reaches
// the daemon, whose per-client and total limits, idle timeout and body
// deadline then apply. (The rest of a TLS handshake is the daemon's: a
// client that stalls there holds a slot of its own address, as one that
// completed it and sent nothing more would, until the idle timeout.)
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
  // `first_bytes_within` for its first bytes, and a plaintext one for up
  // to `header_within` (from then) for the rest of its request header.
  static absl::StatusOr<std::unique_ptr<HttpAcceptor>> Start(const sockaddr_in& address,
                                                             absl::Duration first_bytes_within,
                                                             absl::Duration header_within, Hand hand);
  // Connections waiting for their header at once; beyond it the oldest
  // waiting is closed.
  static constexpr size_t kMaxWaiting = 4096;
  ~HttpAcceptor();  // stops accepting and closes the listening socket
  HttpAcceptor(const HttpAcceptor&) = delete;
  HttpAcceptor& operator=(const HttpAcceptor&) = delete;

  int port() const { return port_; }

 private:
  // A connection waiting for the rest of its request header.
  struct Waiting {
    sockaddr_storage peer;
    socklen_t length;
    absl::Time deadline;
  };
  // What became of a connection looked at: handed on, closed, or waiting.
  enum class Verdict { kHanded, kClosed, kWaiting };

  HttpAcceptor(int listen_fd, int stop_fd, int port, absl::Duration header_within, Hand hand)
      : listen_fd_(listen_fd), stop_fd_(stop_fd), port_(port), header_within_(header_within), hand_(std::move(hand)) {}
  void Loop();
  // Hands `fd` on if its header (or ClientHello) has come; closes it
  // if it has closed or (`fresh`: just accepted) sent nothing.
  Verdict Look(int fd, const sockaddr_storage& peer, socklen_t length, bool fresh);

  const int listen_fd_;
  const int stop_fd_;  // an eventfd: written to stop the loop
  const int port_;
  const absl::Duration header_within_;
  const Hand hand_;
  std::thread thread_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_HTTP_ACCEPTOR_H_
