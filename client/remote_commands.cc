#include "client/remote_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/interrupt.h"
#include "client/render.h"
#include "client/request.h"
#include "common/client_channel.h"
#include "common/grpc_status.h"
#include "google/protobuf/util/json_util.h"
#include "jobspec/job_spec.h"
#include "jobspec/job_state.h"

namespace npuzzle {
namespace {

constexpr absl::Duration kCallDeadline = absl::Seconds(30);

std::string Json(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out, options);
  return out;
}

std::unique_ptr<grpc::ClientContext> Context(absl::Duration deadline) {
  auto context = std::make_unique<grpc::ClientContext>();
  if (deadline != absl::InfiniteDuration()) {
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(absl::ToInt64Milliseconds(deadline)));
  }
  return context;
}

int ExitCodeFor(const v1::Job& job) {
  if (job.state() == v1::JOB_STATE_FAILED) return kExitFailed;
  if (job.state() != v1::JOB_STATE_DONE) return kExitNoAnswer;
  const std::string& s = job.result().status();
  return s == "solved" || s == "unsolvable" ? kExitAnswer : kExitNoAnswer;
}

std::string Summary(const v1::Job& job) {
  std::string line = absl::StrCat(job.id(), " ", JobStateName(job.state()));
  if (!job.worker_id().empty() && job.state() == v1::JOB_STATE_RUNNING) {
    absl::StrAppend(&line, " on ", job.worker_id(), " (attempt ", job.attempt(), ")",
                    RenderEstimate(ProgressFromProto(job.progress())));
  }
  if (job.queue_position() > 0) absl::StrAppend(&line, ", number ", job.queue_position(), " in the queue");
  if (job.has_result()) absl::StrAppend(&line, ": ", job.result().status());
  if (job.result().status() == "solved") absl::StrAppend(&line, ", ", job.result().length(), " moves");
  if (!job.error().empty()) absl::StrAppend(&line, ": ", job.error());
  if (job.error_permanent()) absl::StrAppend(&line, " (the spec is at fault: a retry would fail the same way)");
  if (!job.spec().retry_of().empty()) absl::StrAppend(&line, " (retry of ", job.spec().retry_of(), ")");
  return line;
}

// The final screen for a finished job, as the local solve shows it.
void ShowFinal(const v1::Job& job, bool show_steps) {
  if (job.state() == v1::JOB_STATE_DONE) {
    absl::StatusOr<Board> start = BoardFromProto(job.start());
    absl::StatusOr<Board> goal = BoardFromProto(job.goal());
    if (start.ok() && goal.ok()) {
      std::cout << RenderHuman(*start, *goal, ResultFromProto(job.result()), show_steps);
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
int Follow(const Invocation& in, const Remote& at, grpc::ClientReaderInterface<v1::JobEvent>& events) {
  const bool live = !in.json && isatty(STDERR_FILENO);
  v1::JobEvent event;
  std::optional<v1::Job> last;
  while (events.Read(&event)) {
    if (in.json) {
      const std::optional<nlohmann::json> result = FinalResult(event);
      std::cout << (result ? result->dump() : Json(event)) << "\n" << std::flush;
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
  if (!status.ok()) return at.Fail(status);
  if (!last || !last->has_finish_time()) {
    std::cerr << "npuzzle " << at.command() << ": the stream ended before the job finished\n";
    return kExitFailed;
  }
  if (!in.json) ShowFinal(*last, in.show_steps);
  return ExitCodeFor(*last);
}

absl::StatusOr<std::map<std::string, std::string>> Labels(const Invocation& in) {
  std::map<std::string, std::string> labels;
  for (const std::string& label : in.labels) {
    std::pair<std::string, std::string> kv = absl::StrSplit(label, absl::MaxSplits('=', 1));
    if (!absl::StrContains(label, '=')) {
      return absl::InvalidArgumentError(absl::StrCat("--label '", label, "' is not key=value"));
    }
    labels[kv.first] = kv.second;
  }
  return labels;
}

absl::StatusOr<std::vector<v1::JobSpec>> SpecsOf(const Invocation& in) {
  absl::StatusOr<std::vector<Problem>> problems = ProblemsOf(in);
  if (!problems.ok()) return problems.status();
  absl::StatusOr<SolveRequest> base = RequestOf(in, RequestFor::kRemote);
  if (!base.ok()) return base.status();
  absl::StatusOr<std::map<std::string, std::string>> labels = Labels(in);
  if (!labels.ok()) return labels.status();
  absl::Duration retain;
  if (!in.retain.empty() && (!absl::ParseDuration(in.retain, &retain) || retain < absl::Seconds(1))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--retain '", in.retain, "' is not a duration of a second or more, such as 90s, 10m or 24h"));
  }
  std::vector<v1::JobSpec> specs;
  for (const Problem& p : *problems) {
    SolveRequest r = *base;
    r.start = p.start;
    r.goal = p.goal;
    v1::JobSpec spec = SpecFromRequest(r);
    spec.set_priority(in.priority);
    spec.set_max_workers(in.max_workers);
    if (!in.retain.empty()) spec.set_retain_seconds(absl::ToInt64Seconds(retain));
    spec.mutable_labels()->insert(labels->begin(), labels->end());
    if (!in.request_id.empty()) {
      spec.set_request_id(problems->size() == 1 ? in.request_id : absl::StrCat(in.request_id, "-", specs.size()));
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Reads a job's events to the end, showing nothing; the job as it ended.
absl::StatusOr<v1::Job> FinalState(v1::SolverService::Stub& stub, const std::string& id) {
  v1::WatchJobRequest request;
  request.set_job_id(id);
  auto context = Context(absl::InfiniteDuration());
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
    auto context = Context(kCallDeadline);
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

int Usage(const Remote& at, absl::string_view message) {
  std::cerr << "npuzzle " << at.command() << ": " << message << "\n";
  return kExitUsage;
}

// Runs `call` on each job named on the command line, printing each job it
// returns; the worst exit status.
template <class Request, class Call>
int ForEachJob(const Invocation& in, Remote& at, Call call, bool show_final) {
  if (in.job_ids.empty()) return Usage(at, "give the job: its id as an argument, or --job ID");
  int worst = kExitAnswer;
  for (const std::string& id : in.job_ids) {
    Request request;
    request.set_job_id(id);
    v1::Job job;
    auto context = Context(kCallDeadline);
    const grpc::Status s = call(context.get(), request, &job);
    if (!s.ok()) {
      worst = std::max(worst, at.Fail(s));
      continue;
    }
    if (in.json) {
      std::cout << Json(job) << "\n";
    } else if (show_final && job.has_finish_time()) {
      ShowFinal(job, in.show_steps);
    } else {
      std::cout << Summary(job) << "\n";
    }
  }
  return worst;
}

}  // namespace

absl::StatusOr<Remote> Remote::Dial(std::string command, const Invocation& in) {
  if (in.server.empty()) return absl::InvalidArgumentError("give the server with --server HOST:PORT");
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      OpenChannel(in.server, {in.tls_ca, "", "", in.tls_server_name}, in.token);
  if (!channel.ok()) return channel.status();
  return Remote(std::move(command), !in.token.empty(), !in.tls_ca.empty(), v1::SolverService::NewStub(*channel));
}

// Which of the security settings to look at, for errors that come from
// them: gRPC's own words rarely say.
std::string Remote::Hint(const grpc::Status& s) const {
  if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    return has_token_ ? " (the token given with --token or NPUZZLE_TOKEN is wrong)"
                      : " (the server wants a token: give --token or set NPUZZLE_TOKEN)";
  }
  if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return " (no npuzzle client API there: is it the worker port? Clients use the server's --listen port, 50051 by "
           "default)";
  }
  if (s.error_code() != grpc::StatusCode::UNAVAILABLE && s.error_code() != grpc::StatusCode::UNKNOWN) return "";
  if (absl::StrContains(s.error_message(), "andshake") || absl::StrContains(s.error_message(), "certificate") ||
      absl::StrContains(s.error_message(), "erification")) {
    return " (TLS failed: --tls-ca must be the CA that signed the server's certificate, and the certificate must "
           "name the host dialled or --tls-server-name)";
  }
  return has_ca_ ? "" : " (if the server uses TLS, give --tls-ca)";
}

int Remote::Fail(const grpc::Status& s) const {
  std::cerr << "npuzzle " << command_ << ": " << s.error_message() << Hint(s) << "\n";
  return kExitUsage;
}

int SolveOnServer(const Invocation& in, Remote& at) {
  absl::StatusOr<std::vector<v1::JobSpec>> specs = SpecsOf(in);
  if (!specs.ok()) return Usage(at, specs.status().message());
  int worst = kExitAnswer;
  for (const v1::JobSpec& spec : *specs) {
    v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    v1::Job job;
    auto submit = Context(kCallDeadline);
    if (const grpc::Status s = at.stub().SubmitJob(submit.get(), request, &job); !s.ok()) return at.Fail(s);
    auto context = Context(absl::InfiniteDuration());
    // The job does not end with the stream: Ctrl-C cancels it, and says so,
    // unless --detach, which leaves it running.
    InterruptGuard guard([&] {
      if (in.detach) {
        std::cerr << "\nnpuzzle solve: " << job.id() << " goes on running; npuzzle watch " << job.id()
                  << " follows it again\n";
        // From this thread, with gRPC's running: no static destructors.
        std::cout.flush();
        std::cerr.flush();
        std::_Exit(kExitNoAnswer);
      }
      std::cerr << "\nnpuzzle solve: Ctrl-C: cancelling " << job.id() << " (--detach leaves a job running)\n";
      v1::CancelJobRequest cancel;
      cancel.set_job_id(job.id());
      v1::Job cancelled;
      auto call = Context(kCallDeadline);
      if (const grpc::Status s = at.stub().CancelJob(call.get(), cancel, &cancelled); !s.ok()) {
        std::cerr << "npuzzle solve: could not cancel " << job.id() << ": " << s.error_message() << "\n";
        context->TryCancel();
      }
    });
    v1::WatchJobRequest watch;
    watch.set_job_id(job.id());
    auto events = at.stub().WatchJob(context.get(), watch);
    worst = std::max(worst, Follow(in, at, *events));
    if (guard.interrupted()) return worst;
  }
  return worst;
}

int Submit(const Invocation& in, Remote& at) {
  absl::StatusOr<std::vector<v1::JobSpec>> specs = SpecsOf(in);
  if (!specs.ok()) return Usage(at, specs.status().message());
  for (const v1::JobSpec& spec : *specs) {
    v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    v1::Job job;
    auto context = Context(kCallDeadline);
    const grpc::Status s = at.stub().SubmitJob(context.get(), request, &job);
    if (!s.ok()) return at.Fail(s);
    // Ids alone, so that the output feeds `npuzzle watch` and scripts.
    std::cout << (in.json ? Json(job) : job.id()) << "\n" << std::flush;
  }
  return kExitAnswer;
}

int Watch(const Invocation& in, Remote& at) {
  std::vector<std::string> jobs = in.job_ids;
  absl::StatusOr<std::map<std::string, std::string>> labels = Labels(in);
  if (!labels.ok()) return Usage(at, labels.status().message());
  if (!labels->empty()) {
    absl::StatusOr<std::vector<std::string>> labelled = JobsWithLabels(at.stub(), *labels);
    if (!labelled.ok()) {
      return Usage(at, absl::StrCat(labelled.status().message(), at.Hint(ToGrpc(labelled.status()))));
    }
    jobs.insert(jobs.end(), labelled->begin(), labelled->end());
  }
  if (jobs.empty()) return Usage(at, "give the jobs: ids as arguments, --job ID, or --label K=V");
  if (jobs.size() == 1 && labels->empty()) {
    v1::WatchJobRequest request;
    request.set_job_id(jobs.front());
    auto context = Context(absl::InfiniteDuration());
    auto events = at.stub().WatchJob(context.get(), request);
    return Follow(in, at, *events);
  }
  // Several: one line each as they finish, in the order given (they run
  // side by side on the server, so this order costs no time).
  int worst = kExitAnswer;
  for (const std::string& id : jobs) {
    absl::StatusOr<v1::Job> job = FinalState(at.stub(), id);
    if (!job.ok()) {
      std::cerr << "npuzzle watch: " << id << ": " << job.status().message() << at.Hint(ToGrpc(job.status())) << "\n";
      worst = std::max(worst, kExitUsage);
      continue;
    }
    std::cout << (in.json ? Json(*job) : Summary(*job)) << "\n" << std::flush;
    worst = std::max(worst, ExitCodeFor(*job));
  }
  return worst;
}

int Get(const Invocation& in, Remote& at) {
  return ForEachJob<v1::GetJobRequest>(
      in, at,
      [&](grpc::ClientContext* c, const v1::GetJobRequest& r, v1::Job* job) { return at.stub().GetJob(c, r, job); },
      /*show_final=*/true);
}

int Cancel(const Invocation& in, Remote& at) {
  return ForEachJob<v1::CancelJobRequest>(
      in, at,
      [&](grpc::ClientContext* c, const v1::CancelJobRequest& r, v1::Job* job) {
        return at.stub().CancelJob(c, r, job);
      },
      /*show_final=*/false);
}

int Delete(const Invocation& in, Remote& at) {
  if (in.job_ids.empty()) return Usage(at, "give the job: its id as an argument, or --job ID");
  int worst = kExitAnswer;
  for (const std::string& id : in.job_ids) {
    v1::DeleteJobRequest request;
    request.set_job_id(id);
    v1::DeleteJobResponse response;
    auto context = Context(kCallDeadline);
    const grpc::Status s = at.stub().DeleteJob(context.get(), request, &response);
    if (!s.ok()) {
      worst = std::max(worst, at.Fail(s));
      continue;
    }
    std::cout << id << " deleted\n";
  }
  return worst;
}

int Retry(const Invocation& in, Remote& at) {
  if (in.job_ids.empty()) return Usage(at, "give the job: its id as an argument, or --job ID");
  int worst = kExitAnswer;
  for (size_t i = 0; i < in.job_ids.size(); ++i) {
    v1::RetryJobRequest request;
    request.set_job_id(in.job_ids[i]);
    if (!in.request_id.empty()) {
      request.set_request_id(in.job_ids.size() == 1 ? in.request_id : absl::StrCat(in.request_id, "-", i));
    }
    if (in.max_nodes > 0 || in.max_time_ms > 0 || in.max_memory_mb) {
      request.mutable_limits()->set_max_nodes(in.max_nodes);
      request.mutable_limits()->set_max_time_ms(in.max_time_ms);
      request.mutable_limits()->set_max_memory_mb(in.max_memory_mb.value_or(0));
    }
    v1::Job job;
    auto context = Context(kCallDeadline);
    const grpc::Status s = at.stub().RetryJob(context.get(), request, &job);
    if (!s.ok()) {
      worst = std::max(worst, at.Fail(s));
      continue;
    }
    std::cout << (in.json ? Json(job) : job.id()) << "\n";
  }
  return worst;
}

int List(const Invocation& in, Remote& at) {
  v1::ListJobsRequest request;
  for (const std::string& name : in.states) {
    const std::optional<v1::JobState> state = JobStateFromName(name);
    if (!state) return Usage(at, absl::StrCat("unknown state '", name, "' (queued, running, done, failed, cancelled)"));
    request.add_states(*state);
  }
  absl::StatusOr<std::map<std::string, std::string>> labels = Labels(in);
  if (!labels.ok()) return Usage(at, labels.status().message());
  request.mutable_labels()->insert(labels->begin(), labels->end());
  request.set_page_token(in.page_token);
  // The service may answer a filtered listing in short pages (it bounds its
  // work per call); a page here is as many jobs as asked for, or the end.
  const int wanted = in.page_size;
  v1::ListJobsResponse response;
  do {
    request.set_page_size(wanted - response.jobs_size());
    v1::ListJobsResponse page;
    auto context = Context(kCallDeadline);
    const grpc::Status s = at.stub().ListJobs(context.get(), request, &page);
    if (!s.ok()) return at.Fail(s);
    for (v1::Job& job : *page.mutable_jobs()) *response.add_jobs() = std::move(job);
    response.set_next_page_token(page.next_page_token());
    request.set_page_token(page.next_page_token());
  } while (response.jobs_size() < wanted && !request.page_token().empty());
  if (in.json) {
    std::cout << Json(response) << "\n";
  } else {
    for (const v1::Job& job : response.jobs()) std::cout << Summary(job) << "\n";
    if (!response.next_page_token().empty()) std::cout << "more: --page-token " << response.next_page_token() << "\n";
  }
  return kExitAnswer;
}

}  // namespace npuzzle
