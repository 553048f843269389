#include "common/listen_address.h"

#include <arpa/inet.h>
#include <netdb.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace npuzzle {

absl::StatusOr<sockaddr_in> ParseListenAddress(const std::string& listen, const std::string& what) {
  const size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(what, " address \"", listen, "\" is not HOST:PORT"));
  }
  const std::string host = listen.substr(0, colon);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (host.empty() || host == "0.0.0.0" || host == "*") {
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    return addr;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " address: cannot resolve host \"", host, "\""));
  }
  addr.sin_addr = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
  freeaddrinfo(found);
  return addr;
}

}  // namespace npuzzle
