#include "common/metrics_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/listen_address.h"

namespace npuzzle {
namespace {

MHD_Result Reply(MHD_Connection* connection, unsigned int code, const std::string& body, const char* type) {
  MHD_Response* response =
      MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  const MHD_Result r = MHD_queue_response(connection, code, response);
  MHD_destroy_response(response);
  return r;
}

MHD_Result Handle(void* endpoints, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/, size_t* upload_size, void** /*state*/) {
  if (std::strcmp(method, "GET") != 0 && std::strcmp(method, "HEAD") != 0) {
    *upload_size = 0;
    return Reply(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET is served\n", "text/plain");
  }
  const auto& e = *static_cast<const MetricsServer::Endpoints*>(endpoints);
  if (std::strcmp(url, "/metrics") == 0) {
    return Reply(connection, MHD_HTTP_OK, e.metrics(), "text/plain; version=0.0.4; charset=utf-8");
  }
  if (std::strcmp(url, "/healthz") == 0) return Reply(connection, MHD_HTTP_OK, "ok\n", "text/plain");
  if (std::strcmp(url, "/readyz") == 0) {
    return !e.ready || e.ready() ? Reply(connection, MHD_HTTP_OK, "ready\n", "text/plain")
                                 : Reply(connection, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n", "text/plain");
  }
  return Reply(connection, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n", "text/plain");
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& listen, Endpoints endpoints) {
  absl::StatusOr<sockaddr_in> addr = ParseListenAddress(listen, "metrics");
  if (!addr.ok()) return addr.status();
  std::unique_ptr<MetricsServer> server(new MetricsServer(std::move(endpoints)));
  server->daemon_ =
      MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, nullptr, nullptr, &Handle,
                       const_cast<Endpoints*>(&server->endpoints_), MHD_OPTION_SOCK_ADDR,
                       reinterpret_cast<sockaddr*>(&*addr), MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
  if (server->daemon_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen, " (address in use?)"));
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(server->daemon_, MHD_DAEMON_INFO_BIND_PORT);
  server->port_ = info != nullptr ? info->port : ntohs(addr->sin_port);
  return server;
}

MetricsServer::~MetricsServer() {
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
}

}  // namespace npuzzle
