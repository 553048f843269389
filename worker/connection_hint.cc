#include "worker/connection_hint.h"

#include "absl/strings/match.h"

namespace npuzzle {

std::string ConnectionHint(const grpc::Status& status, WorkerSecurity security) {
  const std::string& message = status.error_message();
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return "no worker service there: is it the client port? Workers dial the server's --worker-listen port (50052 by "
           "default)";
  }
  if (absl::StrContains(message, "andshake") || absl::StrContains(message, "certificate")) {
    return "TLS failed: --tls-ca must be the CA that signed the coordinator's certificate, and that certificate must "
           "name the host dialled or --tls-server-name";
  }
  if (absl::StrContains(message, "Connection refused")) return "nothing listens there: is the coordinator running?";
  // A TLS server drops a plaintext client, and a server that wants client
  // certificates drops a client without one: all the client sees is the
  // socket closing.
  if (absl::StrContains(message, "Socket closed") || absl::StrContains(message, "Connection reset")) {
    if (!security.tls) return "the coordinator closed the connection: if its worker port uses TLS, give --tls-ca";
    if (!security.client_certificate) {
      return "the coordinator closed the connection: if it admits only workers with certificates "
             "(--worker-client-ca), give --tls-cert and --tls-key";
    }
    return "the coordinator refused the handshake: --tls-cert must be signed by its --worker-client-ca";
  }
  return "";
}

}  // namespace npuzzle
