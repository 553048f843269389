// Forwarder: one of a standby coordinator's ports, joined byte for byte to
// the same port of the active coordinator. With a forwarder on each of its
// ports a standby is a working front end: a client, worker or browser that
// reaches it is served by the active one, TLS and all (the bytes are not
// read), so a load balancer may send traffic to every replica and count
// each ready. A connection lasts as long as both ends keep it; when the
// active coordinator goes its connections end, their clients dial again,
// and whichever coordinator has taken over serves them.
#ifndef NPUZZLE_SERVICE_SERVER_FORWARDER_H_
#define NPUZZLE_SERVICE_SERVER_FORWARDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace npuzzle {

class Forwarder {
 public:
  // Listens on `listen` ("HOST:PORT"); at most `max_connections` at once,
  // others closed as they come.
  static absl::StatusOr<std::unique_ptr<Forwarder>> Start(const std::string& listen, int max_connections);
  // Closes the port and every connection, and waits for their threads.
  ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  // Where new connections go, "HOST:PORT"; empty: nowhere (they are
  // closed at once). Connections already joined keep their end.
  void SetTarget(const std::string& target);
  int port() const { return port_; }

 private:
  Forwarder(int listener, int wake, int port, int max_connections);
  void AcceptLoop();
  bool StopRequested() const;
  // Joins `client` to `target` until either end closes or the forwarder
  // stops; then marks relay number `relay` ended.
  void Relay(int64_t relay, int client, const std::string& target);

  const int listener_;
  const int wake_;  // an eventfd: readable once the forwarder stops
  const int port_;
  const int max_connections_;
  absl::Mutex mu_;
  std::string target_ ABSL_GUARDED_BY(mu_);
  int connections_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int64_t> ended_ ABSL_GUARDED_BY(mu_);  // relays for the acceptor to join
  std::thread acceptor_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_SERVER_FORWARDER_H_
