#include "service/api/http_api.h"

#include <microhttpd.h>

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/listen_address.h"
#include "common/log.h"
#include "common/tls.h"
#include "service/api/http_mapping.h"

namespace npuzzle {
namespace {

constexpr size_t kMaxBodyBytes = 1 << 20;
constexpr char kJson[] = "application/json";
// How often a waiting event stream looks at whether the server is
// stopping, and how long it may stay silent before a comment line keeps
// proxies from closing it.
constexpr absl::Duration kStreamPoll = absl::Seconds(1);
constexpr absl::Duration kKeepAlive = absl::Seconds(4);
constexpr size_t kStreamBlock = 16 * 1024;

// What one request has gathered across libmicrohttpd's calls.
struct Exchange {
  std::string body;
  bool too_large = false;
  absl::Time began = absl::Now();
};

MHD_Result Queue(MHD_Connection* connection, unsigned int code, const std::string& body, const char* type,
                 const std::string& allow = "") {
  MHD_Response* response =
      MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (!allow.empty()) MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, allow.c_str());
  if (code == MHD_HTTP_UNAUTHORIZED) MHD_add_response_header(response, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
  const MHD_Result r = MHD_queue_response(connection, code, response);
  MHD_destroy_response(response);
  return r;
}

MHD_Result QueueError(MHD_Connection* connection, const absl::Status& status) {
  return Queue(connection, HttpStatusOf(status.code()), ErrorJson(status), kJson);
}

template <typename M>
MHD_Result QueueMessage(MHD_Connection* connection, const absl::StatusOr<M>& message) {
  if (!message.ok()) return QueueError(connection, message.status());
  return Queue(connection, MHD_HTTP_OK, ToJson(*message), kJson);
}

// A reply the job API gives through a callback, waited for on this
// connection's own thread. The state is shared with the callback, which
// may still be returning when the wait ends.
template <typename T>
absl::StatusOr<T> Await(const std::function<void(std::function<void(absl::StatusOr<T>)>)>& call) {
  struct State {
    absl::Mutex mu;
    std::optional<absl::StatusOr<T>> value ABSL_GUARDED_BY(mu);
  };
  auto state = std::make_shared<State>();
  call([state](absl::StatusOr<T> v) {
    absl::MutexLock lock(&state->mu);
    state->value = std::move(v);
  });
  absl::MutexLock lock(&state->mu);
  state->mu.Await(absl::Condition(
      +[](std::optional<absl::StatusOr<T>>* v) { return v->has_value(); }, &state->value));
  return *std::move(state->value);
}

// One watch streamed as Server-Sent Events: libmicrohttpd pulls bytes,
// and the pull blocks until the watch has an event (or a keep-alive is
// due, or the server stops). The watch's wakeup holds the stream; Free's
// Abandon drops that hold.
class EventStream {
 public:
  EventStream(const HttpApiServer* server, std::shared_ptr<JobWatch> watch)
      : server_(server), watch_(std::move(watch)) {}

  static MHD_Result Queue(const HttpApiServer* server, MHD_Connection* connection, std::shared_ptr<JobWatch> watch) {
    auto stream = std::make_shared<EventStream>(server, watch);
    watch->SetWakeup([stream] { stream->Wake(); });
    MHD_Response* response =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, kStreamBlock, &EventStream::Read,
                                          new std::shared_ptr<EventStream>(stream), &EventStream::Free);
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(response, "X-Accel-Buffering", "no");
    const MHD_Result r = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return r;
  }

 private:
  static ssize_t Read(void* cls, uint64_t /*pos*/, char* buf, size_t max) {
    return (*static_cast<std::shared_ptr<EventStream>*>(cls))->Fill(buf, max);
  }

  static void Free(void* cls) {
    auto* stream = static_cast<std::shared_ptr<EventStream>*>(cls);
    (*stream)->watch_->Abandon();
    delete stream;
  }

  void Wake() {
    absl::MutexLock lock(&mu_);
    woken_ = true;
  }

  ssize_t Fill(char* buf, size_t max) {
    absl::MutexLock lock(&mu_);
    absl::Duration idle;
    while (pending_.empty()) {
      if (sent_last_ || server_->stopping()) return MHD_CONTENT_READER_END_OF_STREAM;
      bool last = false;
      if (std::optional<v1::JobEvent> event = watch_->Next(&last)) {
        pending_ = SseEvent(*event);
        sent_last_ = last;
        break;
      }
      if (idle >= kKeepAlive) {
        pending_ = ": keep-alive\n\n";
        break;
      }
      const absl::Time began = absl::Now();
      mu_.AwaitWithTimeout(absl::Condition(&woken_), kStreamPoll);
      woken_ = false;
      idle += absl::Now() - began;
    }
    const size_t n = std::min(max, pending_.size());
    pending_.copy(buf, n);
    pending_.erase(0, n);
    return static_cast<ssize_t>(n);
  }

  const HttpApiServer* const server_;
  const std::shared_ptr<JobWatch> watch_;
  absl::Mutex mu_;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  std::string pending_ ABSL_GUARDED_BY(mu_);
  bool sent_last_ ABSL_GUARDED_BY(mu_) = false;
};

MHD_Result CollectQuery(void* query, MHD_ValueKind /*kind*/, const char* key, const char* value) {
  static_cast<Query*>(query)->emplace_back(key, value == nullptr ? "" : value);
  return MHD_YES;
}

MHD_Result Answer(HttpApiServer* server, MHD_Connection* connection, const RoutedRequest& routed,
                  const std::string& body) {
  JobApi* api = server->api();
  Query query;
  MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &CollectQuery, &query);
  if (routed.route != Route::kList) {
    if (absl::Status s = CheckNoQuery(query); !s.ok()) return QueueError(connection, s);
  }
  const char* header = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  const std::string authorization = header == nullptr ? "" : header;
  const absl::StatusOr<std::string> tenant = api->Authenticate(header == nullptr ? nullptr : &authorization);
  if (!tenant.ok()) return QueueError(connection, tenant.status());

  switch (routed.route) {
    case Route::kSubmit:
    case Route::kSolve: {
      v1::SubmitJobRequest request;
      if (absl::Status s = FromJson(body, &request); !s.ok()) return QueueError(connection, s);
      if (routed.route == Route::kSubmit) {
        return QueueMessage(connection, Await<v1::Job>([&](JobApi::JobReply reply) {
                              api->Submit(*tenant, request, std::move(reply));
                            }));
      }
      absl::StatusOr<std::shared_ptr<JobWatch>> watch = Await<std::shared_ptr<JobWatch>>(
          [&](JobApi::WatchReply reply) { api->Solve(*tenant, request, std::move(reply)); });
      if (!watch.ok()) return QueueError(connection, watch.status());
      return EventStream::Queue(server, connection, *std::move(watch));
    }
    case Route::kList: {
      absl::StatusOr<v1::ListJobsRequest> request = ListRequestFromQuery(query);
      if (!request.ok()) return QueueError(connection, request.status());
      return QueueMessage(connection, api->List(*tenant, *request));
    }
    case Route::kGet: {
      v1::GetJobRequest request;
      request.set_job_id(routed.job_id);
      return QueueMessage(connection, api->Get(*tenant, request));
    }
    case Route::kDelete: {
      v1::DeleteJobRequest request;
      request.set_job_id(routed.job_id);
      const absl::Status deleted = api->Delete(*tenant, request);
      if (!deleted.ok()) return QueueError(connection, deleted);
      return QueueMessage(connection, absl::StatusOr<v1::DeleteJobResponse>(v1::DeleteJobResponse()));
    }
    case Route::kRetry: {
      v1::RetryJobRequest request;
      if (!body.empty()) {
        if (absl::Status s = FromJson(body, &request); !s.ok()) return QueueError(connection, s);
      }
      request.set_job_id(routed.job_id);
      return QueueMessage(
          connection, Await<v1::Job>([&](JobApi::JobReply reply) { api->Retry(*tenant, request, std::move(reply)); }));
    }
    case Route::kCancel: {
      v1::CancelJobRequest request;
      request.set_job_id(routed.job_id);
      return QueueMessage(
          connection, Await<v1::Job>([&](JobApi::JobReply reply) { api->Cancel(*tenant, request, std::move(reply)); }));
    }
    case Route::kWatch: {
      v1::WatchJobRequest request;
      request.set_job_id(routed.job_id);
      absl::StatusOr<std::shared_ptr<JobWatch>> watch = api->Watch(*tenant, request);
      if (!watch.ok()) return QueueError(connection, watch.status());
      return EventStream::Queue(server, connection, *std::move(watch));
    }
    default:
      return QueueError(connection, absl::InternalError("unrouted request"));
  }
}

MHD_Result Handle(void* cls, MHD_Connection* connection, const char* url, const char* method, const char* /*version*/,
                  const char* upload_data, size_t* upload_size, void** state) {
  if (*state == nullptr) {
    *state = new Exchange;
    return MHD_YES;
  }
  auto* exchange = static_cast<Exchange*>(*state);
  auto* server = static_cast<HttpApiServer*>(cls);
  // A body trickled in keeps the idle timeout from firing: it has a
  // deadline of its own. Refusing to go on closes the connection.
  if (*upload_size > 0 && absl::Now() - exchange->began > server->body_timeout()) return MHD_NO;
  if (*upload_size > 0) {
    if (exchange->body.size() + *upload_size > kMaxBodyBytes) {
      exchange->too_large = true;
    } else {
      exchange->body.append(upload_data, *upload_size);
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (exchange->too_large) {
    return Queue(connection, MHD_HTTP_CONTENT_TOO_LARGE,
                 ErrorJson(absl::InvalidArgumentError(absl::StrCat("the body is over ", kMaxBodyBytes, " bytes")),
                           MHD_HTTP_CONTENT_TOO_LARGE),
                 kJson);
  }
  const RoutedRequest routed = RouteOf(method, url);
  switch (routed.route) {
    case Route::kNotFound:
      return QueueError(connection, absl::NotFoundError(absl::StrCat("no such path: the API is under /v1/jobs, ",
                                                                     "the web page at /")));
    case Route::kMethodNotAllowed:
      return Queue(connection, MHD_HTTP_METHOD_NOT_ALLOWED,
                   ErrorJson(absl::InvalidArgumentError(absl::StrCat(method, " is not allowed here: ", routed.allow)),
                             MHD_HTTP_METHOD_NOT_ALLOWED),
                   kJson, routed.allow);
    case Route::kPage:
      return Queue(connection, MHD_HTTP_OK, server->page(), "text/html; charset=utf-8");
    default:
      return Answer(server, connection, routed, exchange->body);
  }
}

void Completed(void* /*cls*/, MHD_Connection* /*connection*/, void** state, MHD_RequestTerminationCode /*code*/) {
  delete static_cast<Exchange*>(*state);
  *state = nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpApiServer>> HttpApiServer::Start(JobApi* api, Options options) {
  std::unique_ptr<HttpApiServer> server(new HttpApiServer(api, std::move(options)));
  const Options& o = server->options_;
  auto first = std::make_unique<Daemon>();
  if (!o.tls_cert.empty()) {
    absl::StatusOr<std::string> cert = ReadPem("--tls-cert", o.tls_cert, "CERTIFICATE");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem("--tls-key", o.tls_key, "PRIVATE KEY");
    if (!key.ok()) return key.status();
    first->cert = *std::move(cert);
    first->key = *std::move(key);
  }
  if (absl::Status s = server->StartDaemon(*first, false); !s.ok()) return s;
  const bool tls = !first->cert.empty();
  {
    absl::MutexLock lock(&server->serving_mu_);
    server->serving_ = std::move(first);
  }
  absl::StatusOr<sockaddr_in> address = ParseListenAddress(o.listen, "HTTP API");
  if (!address.ok()) return address.status();
  absl::StatusOr<std::unique_ptr<HttpAcceptor>> acceptor = HttpAcceptor::Start(
      *address, o.idle_timeout, o.header_timeout,
      [s = server.get()](int fd, const sockaddr* peer, socklen_t length) { s->Take(fd, peer, length); });
  if (!acceptor.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve the HTTP API on ", o.listen, ": ", acceptor.status().message()));
  }
  server->acceptor_ = *std::move(acceptor);
  if (tls) server->reloader_ = std::thread([s = server.get()] { s->ReloadLoop(); });
  return server;
}

void HttpApiServer::Take(int fd, const sockaddr* address, socklen_t length) {
  absl::MutexLock lock(&serving_mu_);
  // Refused (over a limit), the connection is closed by the daemon.
  MHD_add_connection(serving_->daemon, fd, address, length);
}

absl::Status HttpApiServer::StartDaemon(Daemon& d, bool check_only) {
  const Options& o = options_;
  unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
                       MHD_USE_NO_LISTEN_SOCKET;
  if (!d.cert.empty()) flags |= MHD_USE_TLS;
  if (check_only) flags = MHD_USE_TLS | MHD_USE_NO_LISTEN_SOCKET;
  std::vector<MHD_OptionItem> items;
  if (!d.cert.empty()) {
    items.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, d.cert.data()});
    items.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, d.key.data()});
  }
  items.push_back({MHD_OPTION_END, 0, nullptr});
  d.daemon = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &Handle, this, MHD_OPTION_NOTIFY_COMPLETED, &Completed, nullptr,
      MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned int>(o.max_connections), MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      static_cast<unsigned int>(o.max_connections_per_client), MHD_OPTION_CONNECTION_TIMEOUT,
      static_cast<unsigned int>(std::max<int64_t>(1, absl::ToInt64Seconds(o.idle_timeout))),
      MHD_OPTION_THREAD_STACK_SIZE, static_cast<size_t>(1 << 20), MHD_OPTION_ARRAY, items.data(), MHD_OPTION_END);
  if (d.daemon == nullptr) {
    if (check_only) return absl::InvalidArgumentError("the certificate and key do not make a pair TLS can use");
    return absl::UnavailableError(
        absl::StrCat("cannot serve the HTTP API on ", o.listen, d.cert.empty() ? "" : " (a bad key?)"));
  }
  return absl::OkStatus();
}

void HttpApiServer::ReloadLoop() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      const absl::Time next = absl::Now() + options_.tls_reload_interval;
      while (!stop_reloading_ && absl::Now() < next) {
        mu_.AwaitWithDeadline(absl::Condition(&stop_reloading_), next);
      }
      if (stop_reloading_) return;
    }
    Reload();
  }
}

void HttpApiServer::Reload() {
  absl::StatusOr<std::string> cert = ReadPem("--tls-cert", options_.tls_cert, "CERTIFICATE");
  absl::StatusOr<std::string> key = ReadPem("--tls-key", options_.tls_key, "PRIVATE KEY");
  Daemon* const serving = [&] {
    absl::MutexLock lock(&serving_mu_);
    return serving_.get();
  }();
  const bool same = cert.ok() && key.ok() && *cert == serving->cert && *key == serving->key;
  if (same) return;
  auto next = std::make_unique<Daemon>();
  absl::Status usable = !cert.ok() ? cert.status() : key.status();
  if (usable.ok()) {
    next->cert = *std::move(cert);
    next->key = *std::move(key);
    Daemon check{nullptr, next->cert, next->key};
    usable = StartDaemon(check, true);
    if (check.daemon != nullptr) MHD_stop_daemon(check.daemon);
  }
  if (usable.ok()) usable = StartDaemon(*next, false);
  if (!usable.ok()) {
    // Mid-rotation (a new certificate beside the old key) looks like this
    // too: the old pair is served until the files agree again.
    const std::string refused = next->cert + next->key + std::string(usable.message());
    if (refused != refused_) Log(absl::StrCat("HTTPS: keeping the certificate in use: ", usable.message()));
    refused_ = refused;
    return;
  }
  Log("HTTPS: serving the reloaded certificate");
  refused_.clear();
  absl::MutexLock lock(&serving_mu_);
  retired_.push_back(std::move(serving_));
  serving_ = std::move(next);
}

HttpApiServer::~HttpApiServer() {
  stopping_.store(true);
  {
    absl::MutexLock lock(&mu_);
    stop_reloading_ = true;
  }
  if (reloader_.joinable()) reloader_.join();
  acceptor_.reset();
  for (const std::unique_ptr<Daemon>& d : retired_) MHD_stop_daemon(d->daemon);
  absl::MutexLock lock(&serving_mu_);
  if (serving_ != nullptr) MHD_stop_daemon(serving_->daemon);
}

}  // namespace npuzzle
