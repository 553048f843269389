#include "common/tls.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace npuzzle {
namespace {

// Certificates and keys are small; a bound keeps a wrong path (a disk
// image, /dev/zero) from being read whole.
constexpr std::streamsize kMaxPemBytes = 1 << 20;
// How often a client re-reads its CA and certificate files.
constexpr unsigned kClientReloadSeconds = 60;

}  // namespace

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path, const std::string& kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": cannot read the file"));
  std::string text(kMaxPemBytes + 1, '\0');
  in.read(text.data(), kMaxPemBytes + 1);
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<std::streamsize>(text.size()) > kMaxPemBytes) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": larger than 1 MiB, not a PEM file"));
  }
  if (!absl::StrContains(text, "-----BEGIN ") || !absl::StrContains(text, kind)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": no PEM ", kind, " in the file"));
  }
  return text;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerTls& tls) {
  if (!tls.enabled()) {
    if (!tls.key_file.empty() || !tls.client_ca_file.empty()) {
      return absl::InvalidArgumentError("--tls-key and --worker-client-ca need --tls-cert");
    }
    return grpc::InsecureServerCredentials();
  }
  if (tls.key_file.empty()) return absl::InvalidArgumentError("--tls-cert needs --tls-key");
  if (absl::StatusOr<std::string> pem = ReadPem("--tls-cert", tls.cert_file, "CERTIFICATE"); !pem.ok()) {
    return pem.status();
  }
  if (absl::StatusOr<std::string> pem = ReadPem("--tls-key", tls.key_file, "PRIVATE KEY"); !pem.ok()) {
    return pem.status();
  }
  const bool mutual = !tls.client_ca_file.empty();
  if (mutual) {
    if (absl::StatusOr<std::string> pem = ReadPem("--worker-client-ca", tls.client_ca_file, "CERTIFICATE"); !pem.ok()) {
      return pem.status();
    }
  }
  const unsigned reload_seconds =
      static_cast<unsigned>(std::max<int64_t>(1, absl::ToInt64Seconds(tls.reload_interval)));
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      tls.key_file, tls.cert_file, mutual ? tls.client_ca_file : "", reload_seconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (mutual) {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const ClientTls& tls,
                                                                                 grpc::ChannelArguments* args) {
  if (!tls.enabled()) {
    if (!tls.cert_file.empty() || !tls.key_file.empty() || !tls.server_name.empty()) {
      return absl::InvalidArgumentError("--tls-cert, --tls-key and --tls-server-name need --tls-ca");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (absl::StatusOr<std::string> pem = ReadPem("--tls-ca", tls.ca_file, "CERTIFICATE"); !pem.ok()) return pem.status();
  const bool identity = !tls.cert_file.empty();
  if (identity) {
    if (absl::StatusOr<std::string> pem = ReadPem("--tls-cert", tls.cert_file, "CERTIFICATE"); !pem.ok()) {
      return pem.status();
    }
    if (absl::StatusOr<std::string> pem = ReadPem("--tls-key", tls.key_file, "PRIVATE KEY"); !pem.ok()) {
      return pem.status();
    }
  }
  // Watched like the server's files: a long-lived worker reconnects with
  // its renewed certificate, not the one it started with.
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      tls.key_file, tls.cert_file, tls.ca_file, kClientReloadSeconds);
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(provider);
  options.watch_root_certs();
  if (identity) options.watch_identity_key_cert_pairs();
  if (!tls.server_name.empty()) args->SetSslTargetNameOverride(tls.server_name);
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace npuzzle
