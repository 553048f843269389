// HttpApiServer: the public API over HTTP/1.1 with JSON bodies, for curl
// and browsers, and the web page at "/". Routes and mappings are in
// http_mapping.h; every call goes through the same JobApi as gRPC. Watches
// stream as Server-Sent Events. libmicrohttpd gives each connection a
// thread (a watch blocks its thread while it waits for events), so the
// number of connections is capped.
#ifndef NPUZZLE_SERVICE_HTTP_API_H_
#define NPUZZLE_SERVICE_HTTP_API_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "service/job_api.h"

struct MHD_Daemon;

namespace npuzzle {

class HttpApiServer {
 public:
  struct Options {
    std::string listen;    // "HOST:PORT"; port 0 picks a free one
    std::string page;      // served at "/"
    std::string tls_cert;  // PEM files; empty: plain HTTP
    std::string tls_key;
    int max_connections = 512;
  };

  static absl::StatusOr<std::unique_ptr<HttpApiServer>> Start(JobApi* api, Options options);
  // Ends open event streams (within a second) and stops serving.
  ~HttpApiServer();

  int port() const { return port_; }

  // libmicrohttpd's callbacks reach the server through these.
  JobApi* api() const { return api_; }
  const std::string& page() const { return options_.page; }
  bool stopping() const { return stopping_.load(); }

 private:
  HttpApiServer(JobApi* api, Options options) : api_(api), options_(std::move(options)) {}

  JobApi* const api_;
  const Options options_;
  // libmicrohttpd reads the PEM text from memory it does not copy.
  std::string tls_cert_pem_;
  std::string tls_key_pem_;
  std::atomic<bool> stopping_{false};
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_HTTP_API_H_
