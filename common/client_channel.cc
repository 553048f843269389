#include "common/client_channel.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/client_interceptor.h"

namespace npuzzle {
namespace {

// Tokens are opaque; a bound and printable characters keep them legal as
// an HTTP/2 header value.
constexpr size_t kMaxTokenBytes = 4096;

class BearerToken : public grpc::experimental::Interceptor {
 public:
  explicit BearerToken(const std::string& header) : header_(header) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", header_});
    }
    methods->Proceed();
  }

 private:
  const std::string& header_;
};

class BearerTokenFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenFactory(const std::string& token) : header_("Bearer " + token) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo*) override {
    return new BearerToken(header_);
  }

 private:
  const std::string header_;  // outlives every call: the channel owns this factory
};

absl::Status CheckToken(const std::string& token) {
  if (token.size() > kMaxTokenBytes) return absl::InvalidArgumentError("--token: longer than 4096 bytes");
  for (const char c : token) {
    if (!absl::ascii_isgraph(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("--token: only printable ASCII without spaces is allowed");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const std::string& address, const ClientTls& tls,
                                                           const std::string& token, grpc::ChannelArguments args) {
  // A channel that failed to connect waits before it tries again, and by
  // default each failure in a row makes that wait 1.6 times longer, up to
  // two minutes. A coordinator fails over in about a second, so a client
  // that tried meanwhile would sit out the new one: CI's failover soak saw
  // clients refused for 20-80 s after the new coordinator served. Held to
  // a second, a client waiting on its channel was served 0.1-1.1 s after a
  // coordinator came, against 4.5-6.9 s with the default
  // (Service.AClientWaitingOnItsChannelIsServedWithinASecondOfACoordinator).
  // It costs a down server one connection attempt a second from each client.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = MakeChannelCredentials(tls, &args);
  if (!credentials.ok()) return credentials.status();
  if (token.empty()) return grpc::CreateCustomChannel(address, *credentials, args);
  if (absl::Status s = CheckToken(token); !s.ok()) return s;
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<BearerTokenFactory>(token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, *credentials, args, std::move(interceptors));
}

}  // namespace npuzzle
