#include "client/remote_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/problems.h"
#include "client/render.h"
#include "client/request_flags.h"
#include "common/client_channel.h"
#include "common/grpc_status.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "jobspec/job_spec.h"
#include "npuzzle/v1/solver.grpc.pb.h"

ABSL_FLAG(std::string, server, "", "npuzzle server address (host:port); solve runs locally without it");
ABSL_FLAG(std::string, job, "", "job id (watch, get, cancel; watch also takes ids as arguments)");
ABSL_FLAG(int, priority, 0, "submit, solve: higher runs first");
ABSL_FLAG(int, max_workers, 0,
          "submit, solve: spread an idastar or iddfs job over up to this many workers (0 or 1: one worker)");
ABSL_FLAG(std::vector<std::string>, label, {},
          "submit, solve: key=value labels; list, watch: the jobs that have all of them");
ABSL_FLAG(std::string, request_id, "", "submit, solve: idempotency key");
ABSL_FLAG(std::vector<std::string>, state, {}, "list: queued, running, done, failed, cancelled");
ABSL_FLAG(int, page_size, 50, "list: jobs per page");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA that signed the server's certificate (empty: plaintext)");
ABSL_FLAG(std::string, token, "", "bearer token for a server that requires one (default: $NPUZZLE_TOKEN)");
ABSL_FLAG(std::string, tls_server_name, "", "the name the server's certificate must hold (default: the host dialled)");
ABSL_FLAG(std::string, page_token, "", "list: continue from a previous page");
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(bool, show_steps);

namespace npuzzle {
namespace {

constexpr int kAnswer = 0, kFailed = 1, kBadInput = 2, kNoAnswer = 3;

std::string Json(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out, options);
  return out;
}

// Which of the security settings to look at, for errors that come from
// them: gRPC's own words rarely say.
std::string Hint(const grpc::Status& s) {
  const char* env_token = std::getenv("NPUZZLE_TOKEN");
  const bool has_token = !absl::GetFlag(FLAGS_token).empty() || (env_token != nullptr && *env_token != '\0');
  const bool has_ca = !absl::GetFlag(FLAGS_tls_ca).empty();
  if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    return has_token ? " (the token given with --token or NPUZZLE_TOKEN is wrong)"
                     : " (the server wants a token: give --token or set NPUZZLE_TOKEN)";
  }
  if (s.error_code() != grpc::StatusCode::UNAVAILABLE && s.error_code() != grpc::StatusCode::UNKNOWN) return "";
  if (absl::StrContains(s.error_message(), "andshake") || absl::StrContains(s.error_message(), "certificate") ||
      absl::StrContains(s.error_message(), "erification")) {
    return " (TLS failed: --tls-ca must be the CA that signed the server's certificate, and the certificate must "
           "name the host dialled or --tls-server-name)";
  }
  return has_ca ? "" : " (if the server uses TLS, give --tls-ca)";
}

int Fail(const std::string& command, const grpc::Status& s) {
  std::cerr << "npuzzle " << command << ": " << s.error_message() << Hint(s) << "\n";
  return kBadInput;
}

std::string StateName(v1::JobState s) {
  std::string name = v1::JobState_Name(s).substr(std::string("JOB_STATE_").size());
  for (char& c : name) c = static_cast<char>(std::tolower(c));
  return name;
}

int ExitCodeFor(const v1::Job& job) {
  if (job.state() == v1::JOB_STATE_FAILED) return kFailed;
  if (job.state() != v1::JOB_STATE_DONE) return kNoAnswer;
  const std::string& s = job.result().status();
  return s == "solved" || s == "unsolvable" ? kAnswer : kNoAnswer;
}

std::string Summary(const v1::Job& job) {
  std::string line = absl::StrCat(job.id(), " ", StateName(job.state()));
  if (!job.worker_id().empty() && job.state() == v1::JOB_STATE_RUNNING) {
    absl::StrAppend(&line, " on ", job.worker_id(), " (attempt ", job.attempt(), ")");
  }
  if (job.has_result()) absl::StrAppend(&line, ": ", job.result().status());
  if (job.result().status() == "solved") absl::StrAppend(&line, ", ", job.result().length(), " moves");
  if (!job.error().empty()) absl::StrAppend(&line, ": ", job.error());
  return line;
}

// The final screen for a finished job, as the local solve shows it.
void ShowFinal(const v1::Job& job) {
  if (job.state() == v1::JOB_STATE_DONE) {
    absl::StatusOr<Board> start = BoardFromProto(job.start());
    absl::StatusOr<Board> goal = BoardFromProto(job.goal());
    if (start.ok() && goal.ok()) {
      std::cout << RenderHuman(*start, *goal, ResultFromProto(job.result()), absl::GetFlag(FLAGS_show_steps));
      const v1::Stats& stats = job.result().stats();
      if (stats.workers() > 0) {
        std::cout << absl::StrFormat("spread over %d workers in %d work units\n", stats.workers(), stats.work_units());
      }
      return;
    }
  }
  std::cout << Summary(job) << "\n";
}

// A finished job's result in the JSON a local solve prints, so scripts read
// one shape wherever the solve ran; nullopt for other events (and for jobs
// that ended without a result).
std::optional<nlohmann::json> FinalResult(const v1::JobEvent& event) {
  const v1::Job& job = event.state();
  if (!event.has_state() || job.state() != v1::JOB_STATE_DONE || !job.has_result()) return std::nullopt;
  absl::StatusOr<Board> start = BoardFromProto(job.start());
  absl::StatusOr<Board> goal = BoardFromProto(job.goal());
  if (!start.ok() || !goal.ok()) return std::nullopt;
  return ResultToJson(*start, *goal, ResultFromProto(job.result()));
}

// Prints a job's event stream until its last event; returns the exit code.
// With --json: each event as JSON, the last one (a finished job's) as its
// result in the local solve's shape.
int Follow(const std::string& command, grpc::ClientReaderInterface<v1::JobEvent>& events) {
  const bool json = absl::GetFlag(FLAGS_json);
  const bool live = !json && isatty(STDERR_FILENO);
  v1::JobEvent event;
  std::optional<v1::Job> last;
  while (events.Read(&event)) {
    if (json) {
      std::cout << (FinalResult(event) ? FinalResult(event)->dump() : Json(event)) << "\n" << std::flush;
    } else if (event.has_progress()) {
      if (live) {
        const v1::Progress& p = event.progress();
        std::cerr << "\r\033[K" << RenderProgress(ProgressFromProto(p));
        if (p.units_total() > 0) {
          std::cerr << absl::StrFormat(", units %d/%d, %d workers", p.units_done(), p.units_total(), p.workers());
        }
        std::cerr << std::flush;
      }
    } else if (!event.state().has_finish_time()) {
      if (live) std::cerr << "\r\033[K";
      std::cerr << Summary(event.state()) << "\n";
    }
    if (event.has_state()) last = event.state();
  }
  if (live) std::cerr << "\r\033[K";
  const grpc::Status status = events.Finish();
  if (!status.ok()) return Fail(command, status);
  if (!last || !last->has_finish_time()) {
    std::cerr << "npuzzle " << command << ": the stream ended before the job finished\n";
    return kFailed;
  }
  if (!json) ShowFinal(*last);
  return ExitCodeFor(*last);
}

std::map<std::string, std::string> LabelsFromFlag() {
  std::map<std::string, std::string> labels;
  for (const std::string& label : absl::GetFlag(FLAGS_label)) {
    std::pair<std::string, std::string> kv = absl::StrSplit(label, absl::MaxSplits('=', 1));
    labels[kv.first] = kv.second;
  }
  return labels;
}

absl::StatusOr<std::vector<v1::JobSpec>> SpecsFromFlags() {
  absl::StatusOr<std::vector<Problem>> problems = ProblemsFromFlags();
  if (!problems.ok()) return problems.status();
  absl::StatusOr<SolveRequest> base = RequestFromFlags(RequestFor::kRemote);
  if (!base.ok()) return base.status();
  std::vector<v1::JobSpec> specs;
  for (const Problem& p : *problems) {
    SolveRequest r = *base;
    r.start = p.start;
    r.goal = p.goal;
    // The server decides how many threads a job gets unless asked.
    r.options.threads = 0;
    v1::JobSpec spec = SpecFromRequest(r);
    spec.set_priority(absl::GetFlag(FLAGS_priority));
    spec.set_max_workers(absl::GetFlag(FLAGS_max_workers));
    for (const auto& [key, value] : LabelsFromFlag()) (*spec.mutable_labels())[key] = value;
    if (!absl::GetFlag(FLAGS_request_id).empty()) {
      spec.set_request_id(problems->size() == 1 ? absl::GetFlag(FLAGS_request_id)
                                                : absl::StrCat(absl::GetFlag(FLAGS_request_id), "-", specs.size()));
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Reads a job's events to the end, showing nothing; the job as it ended.
absl::StatusOr<v1::Job> FinalState(v1::SolverService::Stub& stub, const std::string& id,
                                   std::unique_ptr<grpc::ClientContext> context) {
  v1::WatchJobRequest request;
  request.set_job_id(id);
  auto events = stub.WatchJob(context.get(), request);
  v1::JobEvent event;
  std::optional<v1::Job> last;
  while (events->Read(&event)) {
    if (event.has_state()) last = event.state();
  }
  const grpc::Status s = events->Finish();
  if (!s.ok()) return FromGrpc(s);
  if (!last || !last->has_finish_time()) return absl::UnavailableError("the stream ended before the job finished");
  return *last;
}

std::unique_ptr<grpc::ClientContext> Context(absl::Duration deadline) {
  auto context = std::make_unique<grpc::ClientContext>();
  if (deadline != absl::InfiniteDuration()) {
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(absl::ToInt64Milliseconds(deadline)));
  }
  return context;
}

// Every job that has all of `labels`, oldest first, up to a bound.
absl::StatusOr<std::vector<std::string>> JobsWithLabels(v1::SolverService::Stub& stub,
                                                        const std::map<std::string, std::string>& labels) {
  constexpr int kMaxJobs = 10000;
  std::vector<std::string> ids;
  v1::ListJobsRequest request;
  request.mutable_labels()->insert(labels.begin(), labels.end());
  request.set_page_size(1000);
  do {
    v1::ListJobsResponse page;
    auto context = Context(absl::Seconds(30));
    const grpc::Status s = stub.ListJobs(context.get(), request, &page);
    if (!s.ok()) return FromGrpc(s);
    for (const v1::Job& job : page.jobs()) ids.push_back(job.id());
    if (ids.size() > kMaxJobs) {
      return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxJobs, " jobs have those labels: narrow them"));
    }
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  std::reverse(ids.begin(), ids.end());
  return ids;
}

}  // namespace

bool RemoteRequested() { return !absl::GetFlag(FLAGS_server).empty(); }

int RunRemote(const std::string& command, const std::vector<std::string>& args) {
  const std::string server = absl::GetFlag(FLAGS_server);
  if (server.empty()) {
    std::cerr << "npuzzle " << command << ": give the server with --server HOST:PORT\n";
    return kBadInput;
  }
  std::string token = absl::GetFlag(FLAGS_token);
  if (const char* from_env = std::getenv("NPUZZLE_TOKEN"); token.empty() && from_env != nullptr) token = from_env;
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      OpenChannel(server, {absl::GetFlag(FLAGS_tls_ca), "", "", absl::GetFlag(FLAGS_tls_server_name)}, token);
  if (!channel.ok()) {
    std::cerr << "npuzzle " << command << ": " << channel.status().message() << "\n";
    return kBadInput;
  }
  auto stub = v1::SolverService::NewStub(*channel);
  const bool json = absl::GetFlag(FLAGS_json);
  constexpr absl::Duration kCallDeadline = absl::Seconds(30);
  const std::string job_id = absl::GetFlag(FLAGS_job);
  if ((command == "get" || command == "cancel") && job_id.empty()) {
    std::cerr << "npuzzle " << command << ": give the job with --job ID\n";
    return kBadInput;
  }

  if (command == "submit" || command == "solve") {
    absl::StatusOr<std::vector<v1::JobSpec>> specs = SpecsFromFlags();
    if (!specs.ok()) {
      std::cerr << "npuzzle " << command << ": " << specs.status().message() << "\n";
      return kBadInput;
    }
    int worst = kAnswer;
    for (const v1::JobSpec& spec : *specs) {
      v1::SubmitJobRequest request;
      *request.mutable_spec() = spec;
      if (command == "submit") {
        v1::Job job;
        auto context = Context(kCallDeadline);
        const grpc::Status s = stub->SubmitJob(context.get(), request, &job);
        if (!s.ok()) return Fail(command, s);
        // Ids alone, so that the output feeds `npuzzle watch` and scripts.
        std::cout << (json ? Json(job) : job.id()) << "\n" << std::flush;
      } else {
        auto context = Context(absl::InfiniteDuration());
        auto events = stub->Solve(context.get(), request);
        worst = std::max(worst, Follow(command, *events));
      }
    }
    return worst;
  }
  if (command == "watch") {
    std::vector<std::string> jobs = args;
    if (!job_id.empty()) jobs.insert(jobs.begin(), job_id);
    const std::map<std::string, std::string> labels = LabelsFromFlag();
    if (!labels.empty()) {
      absl::StatusOr<std::vector<std::string>> labelled = JobsWithLabels(*stub, labels);
      if (!labelled.ok()) {
        std::cerr << "npuzzle watch: " << labelled.status().message() << Hint(ToGrpc(labelled.status())) << "\n";
        return kBadInput;
      }
      jobs.insert(jobs.end(), labelled->begin(), labelled->end());
    }
    if (jobs.empty()) {
      std::cerr << "npuzzle watch: give the jobs: --job ID, ids as arguments, or --label K=V\n";
      return kBadInput;
    }
    if (jobs.size() == 1 && labels.empty()) {
      v1::WatchJobRequest request;
      request.set_job_id(jobs.front());
      auto context = Context(absl::InfiniteDuration());
      auto events = stub->WatchJob(context.get(), request);
      return Follow(command, *events);
    }
    // Several: one line each as they finish, in the order given (they run
    // side by side on the server, so this order costs no time).
    int worst = kAnswer;
    for (const std::string& id : jobs) {
      absl::StatusOr<v1::Job> job = FinalState(*stub, id, Context(absl::InfiniteDuration()));
      if (!job.ok()) {
        std::cerr << "npuzzle watch: " << id << ": " << job.status().message() << Hint(ToGrpc(job.status())) << "\n";
        worst = std::max(worst, kBadInput);
        continue;
      }
      std::cout << (json ? Json(*job) : Summary(*job)) << "\n" << std::flush;
      worst = std::max(worst, ExitCodeFor(*job));
    }
    return worst;
  }
  if (command == "get" || command == "cancel") {
    v1::Job job;
    auto context = Context(kCallDeadline);
    grpc::Status s;
    if (command == "get") {
      v1::GetJobRequest request;
      request.set_job_id(job_id);
      s = stub->GetJob(context.get(), request, &job);
    } else {
      v1::CancelJobRequest request;
      request.set_job_id(job_id);
      s = stub->CancelJob(context.get(), request, &job);
    }
    if (!s.ok()) return Fail(command, s);
    if (json) {
      std::cout << Json(job) << "\n";
    } else if (command == "get" && job.has_finish_time()) {
      ShowFinal(job);
    } else {
      std::cout << Summary(job) << "\n";
    }
    return kAnswer;
  }
  if (command == "list") {
    v1::ListJobsRequest request;
    for (const std::string& state : absl::GetFlag(FLAGS_state)) {
      v1::JobState s;
      std::string name = "JOB_STATE_" + state;
      for (char& c : name) c = static_cast<char>(std::toupper(c));
      if (!v1::JobState_Parse(name, &s)) {
        std::cerr << "npuzzle list: unknown state '" << state << "' (queued, running, done, failed, cancelled)\n";
        return kBadInput;
      }
      request.add_states(s);
    }
    for (const auto& [key, value] : LabelsFromFlag()) (*request.mutable_labels())[key] = value;
    request.set_page_size(absl::GetFlag(FLAGS_page_size));
    request.set_page_token(absl::GetFlag(FLAGS_page_token));
    v1::ListJobsResponse response;
    auto context = Context(kCallDeadline);
    const grpc::Status s = stub->ListJobs(context.get(), request, &response);
    if (!s.ok()) return Fail(command, s);
    if (json) {
      std::cout << Json(response) << "\n";
    } else {
      for (const v1::Job& job : response.jobs()) std::cout << Summary(job) << "\n";
      if (!response.next_page_token().empty()) {
        std::cout << "more: --page-token " << response.next_page_token() << "\n";
      }
    }
    return kAnswer;
  }
  std::cerr << "npuzzle: unknown command '" << command << "'\n";
  return kBadInput;
}

}  // namespace npuzzle
