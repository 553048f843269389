// How the HTTP/JSON API maps onto the gRPC one: which method and path is
// which call, status codes as Google's API design guide maps gRPC's, the
// JSON error body, protobuf's JSON mapping for messages, and a job
// listing's query parameters. Pure functions, tested without a network.
#ifndef NPUZZLE_SERVICE_API_HTTP_MAPPING_H_
#define NPUZZLE_SERVICE_API_HTTP_MAPPING_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

enum class Route {
  kNotFound,
  kMethodNotAllowed,
  kPage,    // GET /
  kSubmit,  // POST /v1/jobs
  kList,    // GET /v1/jobs
  kSolve,   // POST /v1/jobs:solve (events)
  kGet,     // GET /v1/jobs/{id}
  kWatch,   // GET /v1/jobs/{id}:watch (events)
  kCancel,  // POST /v1/jobs/{id}:cancel
  kDelete,  // DELETE /v1/jobs/{id}
  kRetry,   // POST /v1/jobs/{id}:retry (body: a RetryJobRequest without job_id, or none)
};

struct RoutedRequest {
  Route route = Route::kNotFound;
  std::string job_id;
  std::string allow;  // kMethodNotAllowed: the methods the path takes
};

RoutedRequest RouteOf(absl::string_view method, absl::string_view path);

using Query = std::vector<std::pair<std::string, std::string>>;

// GET /v1/jobs?state=RUNNING&state=QUEUED&label=k=v&page_size=N&page_token=T
// (states with or without the JOB_STATE_ prefix, in any case). An unknown
// parameter or a malformed value is INVALID_ARGUMENT naming it.
absl::StatusOr<v1::ListJobsRequest> ListRequestFromQuery(const Query& query);
// The other routes take no parameters.
absl::Status CheckNoQuery(const Query& query);

int HttpStatusOf(absl::StatusCode code);
// {"error": {"code": 404, "status": "NOT_FOUND", "message": "..."}};
// `http_code` 0: HttpStatusOf the status.
std::string ErrorJson(const absl::Status& status, int http_code = 0);

std::string ToJson(const google::protobuf::Message& message);
// INVALID_ARGUMENT naming what the parser found wrong.
absl::Status FromJson(absl::string_view json, google::protobuf::Message* message);

// One Server-Sent Event carrying `event` as JSON.
std::string SseEvent(const v1::JobEvent& event);

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_HTTP_MAPPING_H_
