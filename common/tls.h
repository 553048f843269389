// TLS for the service's ports and for the programs that dial them. Server
// credentials come from a file-watching provider, so a rotated certificate
// or client CA is picked up without a restart; the files are checked once
// up front so that a wrong path is an error at start, not a stream of
// failed handshakes. Empty settings mean plaintext.
#ifndef NPUZZLE_COMMON_TLS_H_
#define NPUZZLE_COMMON_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace npuzzle {

struct ServerTls {
  std::string cert_file;       // PEM chain; empty: plaintext
  std::string key_file;        // PEM private key of the first certificate
  std::string client_ca_file;  // set: peers must present a certificate it signed
  absl::Duration reload_interval = absl::Seconds(60);

  bool enabled() const { return !cert_file.empty(); }
};

// Errors name the flag (--tls-cert, --tls-key, --worker-client-ca) and the
// file.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerTls& tls);

// A PEM file's text (at most 1 MiB, holding a `kind` block such as
// "CERTIFICATE" or "PRIVATE KEY"), or an error naming the flag, the file
// and what is wrong with it.
absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path, const std::string& kind);

struct ClientTls {
  std::string ca_file;      // PEM roots that sign the server's certificate; empty: plaintext
  std::string cert_file;    // for mutual TLS: this program's certificate
  std::string key_file;     // and its key
  std::string server_name;  // checked against the server's certificate instead of the dialled host

  bool enabled() const { return !ca_file.empty(); }
};

// Credentials for a channel, and in `args` the server-name override when
// one is set. Errors name the flag (--tls-ca, --tls-cert, --tls-key) and
// the file.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const ClientTls& tls,
                                                                                 grpc::ChannelArguments* args);

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_TLS_H_
