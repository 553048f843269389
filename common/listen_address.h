// The "HOST:PORT" form of the HTTP listeners' flags, read into an IPv4
// socket address (HOST empty, "*" or 0.0.0.0: every interface).
#ifndef NPUZZLE_COMMON_LISTEN_ADDRESS_H_
#define NPUZZLE_COMMON_LISTEN_ADDRESS_H_

#include <netinet/in.h>

#include <string>

#include "absl/status/statusor.h"

namespace npuzzle {

// Errors name `what` ("metrics address ...").
absl::StatusOr<sockaddr_in> ParseListenAddress(const std::string& listen, const std::string& what);

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_LISTEN_ADDRESS_H_
