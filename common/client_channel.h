// Channels to the npuzzle server as its clients dial it (the CLI, tests,
// benchmarks): TLS when a CA is given, and every call carrying the bearer
// token when one is given. The token travels as call metadata added by an
// interceptor, so it works over plaintext too (local use; the server warns
// that such a setup is unencrypted).
#ifndef NPUZZLE_COMMON_CLIENT_CHANNEL_H_
#define NPUZZLE_COMMON_CLIENT_CHANNEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/tls.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace npuzzle {

// Errors name the flag (--tls-ca and friends, --token) and what is wrong.
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const std::string& address, const ClientTls& tls,
                                                           const std::string& token, grpc::ChannelArguments args = {});

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_CLIENT_CHANNEL_H_
