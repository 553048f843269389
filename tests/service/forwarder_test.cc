// The standby's forwarder over real loopback sockets: bytes both ways, a
// half close passed on, its connection limit, no target, and stopping.
#include "service/server/forwarder.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

// A listening loopback socket; its port in `port`.
int ListenOnLoopback(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Everything `fd` sends until it closes, or what came within `timeout_ms`.
std::string ReadToEnd(int fd, int timeout_ms = 5000) {
  std::string got;
  char buffer[4096];
  pollfd p = {fd, POLLIN, 0};
  while (poll(&p, 1, timeout_ms) > 0) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    got.append(buffer, n);
  }
  return got;
}

// Whether `fd` was closed by the other end within `timeout_ms`.
bool ClosedWithin(int fd, int timeout_ms) {
  pollfd p = {fd, POLLIN, 0};
  char byte;
  return poll(&p, 1, timeout_ms) > 0 && read(fd, &byte, 1) <= 0;
}

std::unique_ptr<Forwarder> StartForwarder(int max_connections) {
  absl::StatusOr<std::unique_ptr<Forwarder>> started = Forwarder::Start("127.0.0.1:0", max_connections);
  EXPECT_TRUE(started.ok()) << started.status();
  return started.ok() ? *std::move(started) : nullptr;
}

TEST(Forwarder, CarriesBytesBothWaysAndPassesOnAHalfClose) {
  int target_port = 0;
  const int target = ListenOnLoopback(&target_port);
  ASSERT_GE(target, 0);
  // Reads until the client's end, then answers with what it read.
  std::thread server([target] {
    const int conn = accept(target, nullptr, nullptr);
    const std::string got = ReadToEnd(conn);
    const std::string reply = absl::StrCat("read ", got.size(), " bytes: ", got.substr(0, 5));
    write(conn, reply.data(), reply.size());
    close(conn);
  });
  std::unique_ptr<Forwarder> forwarder = StartForwarder(4);
  ASSERT_NE(forwarder, nullptr);
  forwarder->SetTarget(absl::StrCat("127.0.0.1:", target_port));
  const int client = Connect(forwarder->port());
  ASSERT_GE(client, 0);
  const std::string sent = "hello" + std::string(300000, 'x');  // more than one chunk
  ASSERT_EQ(write(client, sent.data(), sent.size()), static_cast<ssize_t>(sent.size()));
  shutdown(client, SHUT_WR);
  EXPECT_EQ(ReadToEnd(client), "read 300005 bytes: hello");
  close(client);
  server.join();
  close(target);
}

TEST(Forwarder, ClosesConnectionsBeyondItsLimitAndThoseWithNowhereToGo) {
  std::unique_ptr<Forwarder> forwarder = StartForwarder(2);
  ASSERT_NE(forwarder, nullptr);
  const int nowhere = Connect(forwarder->port());
  EXPECT_TRUE(ClosedWithin(nowhere, 2000)) << "no target, yet the connection stayed open";
  close(nowhere);

  int target_port = 0;
  const int target = ListenOnLoopback(&target_port);
  // Takes three connections, says nothing, and closes each when its
  // client does, as the coordinator would.
  std::thread server([target] {
    std::vector<pollfd> fds = {{target, POLLIN, 0}};
    for (int accepted = 0, open = 0; (accepted < 3 || open > 0) && poll(fds.data(), fds.size(), 10000) > 0;) {
      for (size_t i = 1; i < fds.size(); ++i) {
        char buffer[256];
        if (fds[i].fd < 0 || fds[i].revents == 0 || read(fds[i].fd, buffer, sizeof(buffer)) > 0) continue;
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
      if (fds[0].revents != 0) {
        fds.push_back({accept(target, nullptr, nullptr), POLLIN, 0});
        ++accepted;
        ++open;
      }
    }
  });
  forwarder->SetTarget(absl::StrCat("127.0.0.1:", target_port));
  std::vector<int> held = {Connect(forwarder->port()), Connect(forwarder->port())};
  for (int fd : held) EXPECT_FALSE(ClosedWithin(fd, 300));
  const int third = Connect(forwarder->port());
  EXPECT_TRUE(ClosedWithin(third, 2000)) << "a third connection beyond the limit of 2";
  close(third);
  close(held[0]);
  // Its place is free again once the forwarder has seen it go.
  absl::SleepFor(absl::Milliseconds(200));
  const int again = Connect(forwarder->port());
  EXPECT_FALSE(ClosedWithin(again, 300));
  close(again);
  close(held[1]);
  server.join();
  close(target);
}

TEST(Forwarder, StoppingEndsEveryConnectionAndFreesThePort) {
  int target_port = 0;
  const int target = ListenOnLoopback(&target_port);
  std::unique_ptr<Forwarder> forwarder = StartForwarder(4);
  ASSERT_NE(forwarder, nullptr);
  forwarder->SetTarget(absl::StrCat("127.0.0.1:", target_port));
  const int port = forwarder->port();
  const int client = Connect(port);
  EXPECT_FALSE(ClosedWithin(client, 200));
  forwarder.reset();
  EXPECT_TRUE(ClosedWithin(client, 1000));
  close(client);
  // The port is free at once: the coordinator taking over binds it next.
  absl::StatusOr<std::unique_ptr<Forwarder>> again = Forwarder::Start(absl::StrCat("127.0.0.1:", port), 1);
  EXPECT_TRUE(again.ok()) << again.status();
  close(target);
}

}  // namespace
}  // namespace npuzzle
