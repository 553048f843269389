#include "service/api/http_mapping.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace npuzzle {
namespace {

constexpr absl::string_view kJobs = "/v1/jobs";

RoutedRequest Only(absl::string_view method, absl::string_view allowed, Route route, std::string id = "") {
  if (method == allowed || (allowed == "GET" && method == "HEAD")) return {route, std::move(id), ""};
  return {Route::kMethodNotAllowed, "", std::string(allowed)};
}

// "QUEUED, RUNNING, ...", from the enum itself.
std::string StateNames() {
  std::string names;
  const google::protobuf::EnumDescriptor* states = v1::JobState_descriptor();
  for (int i = 0; i < states->value_count(); ++i) {
    absl::string_view name = states->value(i)->name();
    if (states->value(i)->number() == v1::JOB_STATE_UNSPECIFIED || !absl::ConsumePrefix(&name, "JOB_STATE_")) continue;
    absl::StrAppend(&names, names.empty() ? "" : ", ", name);
  }
  return names;
}

}  // namespace

RoutedRequest RouteOf(absl::string_view method, absl::string_view path) {
  if (path == "/" || path == "/index.html") return Only(method, "GET", Route::kPage);
  if (path == kJobs) {
    if (method == "POST") return {Route::kSubmit, "", ""};
    if (method == "GET" || method == "HEAD") return {Route::kList, "", ""};
    return {Route::kMethodNotAllowed, "", "GET, POST"};
  }
  if (path == absl::StrCat(kJobs, ":solve")) return Only(method, "POST", Route::kSolve);
  absl::string_view rest = path;
  if (!absl::ConsumePrefix(&rest, kJobs) || !absl::ConsumePrefix(&rest, "/") || rest.empty()) return {};
  if (absl::ConsumeSuffix(&rest, ":watch")) return Only(method, "GET", Route::kWatch, std::string(rest));
  if (absl::ConsumeSuffix(&rest, ":cancel")) return Only(method, "POST", Route::kCancel, std::string(rest));
  if (absl::ConsumeSuffix(&rest, ":retry")) return Only(method, "POST", Route::kRetry, std::string(rest));
  if (absl::StrContains(rest, ':') || absl::StrContains(rest, '/')) return {};
  if (method == "DELETE") return {Route::kDelete, std::string(rest), ""};
  if (method == "GET" || method == "HEAD") return {Route::kGet, std::string(rest), ""};
  return {Route::kMethodNotAllowed, "", "GET, DELETE"};
}

absl::StatusOr<v1::ListJobsRequest> ListRequestFromQuery(const Query& query) {
  v1::ListJobsRequest request;
  for (const auto& [key, value] : query) {
    if (key == "state") {
      std::string name = absl::AsciiStrToUpper(value);
      if (!absl::StartsWith(name, "JOB_STATE_")) name = "JOB_STATE_" + name;
      v1::JobState state;
      if (!v1::JobState_Parse(name, &state) || state == v1::JOB_STATE_UNSPECIFIED) {
        return absl::InvalidArgumentError(
            absl::StrCat("state '", value.substr(0, 64), "' is not a job state (", StateNames(), ")"));
      }
      request.add_states(state);
    } else if (key == "label") {
      const size_t eq = value.find('=');
      if (eq == std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat("label '", value.substr(0, 64), "' is not KEY=VALUE"));
      }
      (*request.mutable_labels())[value.substr(0, eq)] = value.substr(eq + 1);
    } else if (key == "page_size") {
      int size = 0;
      if (!absl::SimpleAtoi(value, &size)) {
        return absl::InvalidArgumentError(absl::StrCat("page_size '", value.substr(0, 64), "' is not a number"));
      }
      request.set_page_size(size);
    } else if (key == "page_token") {
      request.set_page_token(value);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown query parameter '", key.substr(0, 64),
                                                     "' (a listing takes state, label, page_size, page_token)"));
    }
  }
  return request;
}

absl::Status CheckNoQuery(const Query& query) {
  if (query.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown query parameter '", query.front().first.substr(0, 64), "' (this call takes none)"));
}

// google.rpc.Code to HTTP, as https://cloud.google.com/apis/design/errors
// lists them.
int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

std::string ErrorJson(const absl::Status& status, int http_code) {
  const nlohmann::json body = {{"error",
                                {{"code", http_code != 0 ? http_code : HttpStatusOf(status.code())},
                                 {"status", absl::StatusCodeToString(status.code())},
                                 {"message", std::string(status.message())}}}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ToJson(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::MessageToJsonString(message, &out);
  return out;
}

absl::Status FromJson(absl::string_view json, google::protobuf::Message* message) {
  if (json.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the body must be a ", message->GetDescriptor()->name(), " in JSON, and is empty"));
  }
  const auto parsed = google::protobuf::util::JsonStringToMessage(std::string(json), message);
  if (parsed.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("the body is not a ", message->GetDescriptor()->name(),
                                                 " in JSON: ", std::string(parsed.message()).substr(0, 200)));
}

std::string SseEvent(const v1::JobEvent& event) { return absl::StrCat("data: ", ToJson(event), "\n\n"); }

}  // namespace npuzzle
