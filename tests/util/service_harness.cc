#include "tests/util/service_harness.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/client_channel.h"
#include "common/grpc_status.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "jobspec/job_spec.h"
#include "tests/util/solve_util.h"

namespace npuzzle::testing {

void ExpectReplays(const v1::Job& job) {
  absl::StatusOr<Board> start = BoardFromProto(job.start());
  absl::StatusOr<Board> goal = BoardFromProto(job.goal());
  ASSERT_TRUE(start.ok() && goal.ok()) << job.id();
  ExpectReplays(*start, *goal, job.result().moves(), job.result().length(), job.id());
}

int FreePort() {
  // A port the kernel picks (bind to port 0) is one of its ephemeral ports,
  // which every outgoing connection draws from too: between this check and
  // the server's bind, a connection of a test running beside this one took
  // one ("Address already in use" in CI). Ports below that range are never
  // handed out that way, so the pick is random among them, checked free by
  // binding it. The band stays clear of the service's default ports (8080,
  // 9090, 50051, 50052), which `scripts/run` started beside the suite holds.
  constexpr int kLowest = 10000;
  int ephemeral_low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  const int highest = std::clamp(ephemeral_low, kLowest + 1000, 50000);
  thread_local std::mt19937 rng(std::random_device{}());
  for (;;) {
    const int port = kLowest + static_cast<int>(rng() % static_cast<unsigned>(highest - kLowest));
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (free) return port;
  }
}

Process::Process(std::vector<std::string> argv, std::string log) : log_(std::move(log)) {
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    setpgid(0, 0);  // its own group: a kill reaches its local workers too
    execv(args[0], args.data());
    _exit(127);
  }
}

Process::~Process() {
  if (!reaped_) {
    // Stopped as an operator would, so that it shuts down cleanly (and,
    // under AddressSanitizer, has its leaks checked): it must then exit 0,
    // unless the test signalled it itself and so judges its end.
    const bool judged_by_test = signalled_;
    Signal(SIGTERM);
    const int code = Wait(absl::Seconds(15));
    if (reaped_ && code != 0 && !judged_by_test) {
      ADD_FAILURE() << "after SIGTERM, " << log_ << " ended with "
                    << (WIFSIGNALED(status_) ? absl::StrCat("signal ", WTERMSIG(status_))
                                             : absl::StrCat("status ", code))
                    << ":\n"
                    << Log();
    }
  }
  // Whatever is left of its group (local workers of a coordinator that did
  // not stop) goes now.
  kill(-pid_, SIGKILL);
  if (!reaped_) waitpid(pid_, &status_, 0);
}

void Process::Signal(int signal) {
  signalled_ = true;
  kill(pid_, signal);
}

bool Process::Running() {
  if (reaped_) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

int Process::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + Scaled(timeout);
  while (Running() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
  if (!reaped_) return -1;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

std::string Process::Log() const {
  std::ifstream in(log_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Coordinator::Coordinator(const TempDir& dir, int local_workers, std::vector<std::string> extra_flags)
    : dir_(dir.path()),
      data_dir_(absl::StrCat(dir.path(), "/data")),
      local_workers_(local_workers),
      extra_flags_(std::move(extra_flags)),
      client_port_(FreePort()),
      worker_port_(FreePort()) {}

std::string Coordinator::client_address() const { return absl::StrCat("127.0.0.1:", client_port_); }
std::string Coordinator::worker_address() const { return absl::StrCat("127.0.0.1:", worker_port_); }

void Coordinator::Start() {
  // FreePort's ports are free when picked, not when the server binds them:
  // a test running beside this one can pick the same one in between (they
  // are drawn at random from some 20,000, so rarely). A first start that
  // lost its ports that way picks new ones; a restart keeps its ports,
  // which workers and clients know.
  const bool first = starts_ == 0;
  for (int attempt = 0;; ++attempt) {
    Launch();
    if (AwaitReady(Scaled(absl::Seconds(15)))) return;
    const bool lost_its_ports = !process_->Running() && absl::StrContains(process_->Log(), "cannot listen on");
    if (!first || !lost_its_ports || attempt == 4) break;
    client_port_ = FreePort();
    worker_port_ = FreePort();
  }
  ADD_FAILURE() << "the coordinator did not start:\n" << process_->Log();
}

void Coordinator::Launch() {
  std::vector<std::string> argv = {
      absl::StrCat(NPUZZLE_BIN_DIR, "/npuzzle-server"), absl::StrCat("--listen=", client_address()),
      absl::StrCat("--worker-listen=", worker_address()), absl::StrCat("--data-dir=", data_dir_),
      absl::StrCat("--local-workers=", local_workers_),
      // Quick to notice lost workers, quick to recover.
      "--lease-timeout-ms=3000", "--recovery-grace-ms=3000", "--drain-grace-ms=5000", "--metrics-listen=127.0.0.1:0",
      "--http-listen=127.0.0.1:0"};
  const std::string port_file = dir_ + "/ports";
  std::filesystem::remove(port_file);
  argv.push_back(absl::StrCat("--port-file=", port_file));
  argv.insert(argv.end(), extra_flags_.begin(), extra_flags_.end());
  process_ = std::make_unique<Process>(argv, absl::StrCat(dir_, "/server-", ++starts_, ".log"));
}

bool Coordinator::AwaitReady(absl::Duration timeout) {
  // Dial only once it listens: early refusals would make the channel wait
  // out a reconnect backoff.
  const std::string port_file = dir_ + "/ports";
  const absl::Time deadline = absl::Now() + timeout;
  while (!std::filesystem::exists(port_file) && process_->Running() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  int client_port = 0, worker_port = 0;
  std::ifstream(port_file) >> client_port >> worker_port >> metrics_port_ >> http_port_;
  stub_ = Dial(client_address(), client_tls_, token_);
  while (absl::Now() < deadline && process_->Running() &&
         GetJob(*stub_, "probe").status().code() == absl::StatusCode::kUnavailable) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  return GetJob(*stub_, "probe").status().code() != absl::StatusCode::kUnavailable;
}

std::unique_ptr<v1::SolverService::Stub> Dial(const std::string& address, const ClientTls& tls,
                                              const std::string& token) {
  // A fresh connection: one shared with an earlier server process could
  // still look ready.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(address, tls, token, args);
  EXPECT_TRUE(channel.ok()) << channel.status();
  return channel.ok() ? v1::SolverService::NewStub(*channel) : nullptr;
}

std::unique_ptr<Process> StartWorker(const Coordinator& c, const TempDir& dir, const std::string& id,
                                     std::vector<std::string> extra_flags) {
  std::vector<std::string> argv = {absl::StrCat(NPUZZLE_BIN_DIR, "/npuzzle-worker"),
                                   absl::StrCat("--coordinator=", c.worker_address()),
                                   absl::StrCat("--worker-id=", id),
                                   absl::StrCat("--data-dir=", c.data_dir()),
                                   "--heartbeat-ms=300",
                                   "--metrics-listen="};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  return std::make_unique<Process>(argv, absl::StrCat(dir.path(), "/worker-", id, ".log"));
}

absl::StatusOr<v1::Job> Submit(v1::SolverService::Stub& stub, const v1::JobSpec& spec) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  v1::Job job;
  const grpc::Status s = stub.SubmitJob(&context, request, &job);
  if (!s.ok()) return FromGrpc(s);
  return job;
}

absl::StatusOr<v1::Job> GetJob(v1::SolverService::Stub& stub, const std::string& id) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::GetJobRequest request;
  request.set_job_id(id);
  v1::Job job;
  const grpc::Status s = stub.GetJob(&context, request, &job);
  if (!s.ok()) return FromGrpc(s);
  return job;
}

grpc::Status Cancel(v1::SolverService::Stub& stub, const std::string& id, v1::Job* job) {
  grpc::ClientContext context;
  v1::CancelJobRequest request;
  request.set_job_id(id);
  return stub.CancelJob(&context, request, job);
}

absl::StatusOr<v1::Job> AwaitState(v1::SolverService::Stub& stub, const std::string& id, v1::JobState state,
                                   absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + Scaled(timeout);
  for (;;) {
    absl::StatusOr<v1::Job> job = GetJob(stub, id);
    if (job.ok() && job->state() == state) return job;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("job ", id, " never reached ", v1::JobState_Name(state),
                       "; last: ", job.ok() ? v1::JobState_Name(job->state()) : std::string(job.status().message())));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

absl::Status AwaitStoredState(v1::SolverService::Stub& stub, const std::string& id, v1::JobState state,
                              absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + Scaled(timeout);
  do {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::ListJobsRequest request;
    request.add_states(state);
    request.set_page_size(1000);
    v1::ListJobsResponse listed;
    if (const grpc::Status s = stub.ListJobs(&context, request, &listed); !s.ok()) return FromGrpc(s);
    for (const v1::Job& job : listed.jobs()) {
      if (job.id() == id) return absl::OkStatus();
    }
    absl::SleepFor(absl::Milliseconds(20));
  } while (absl::Now() < deadline);
  return absl::DeadlineExceededError(absl::StrCat("job ", id, " was never stored as ", v1::JobState_Name(state)));
}

int Watched::finals() const {
  int n = 0;
  for (const v1::JobEvent& e : events) n += e.has_state() && e.state().has_finish_time();
  return n;
}

const v1::Job* Watched::final_job() const {
  for (const v1::JobEvent& e : events) {
    if (e.has_state() && e.state().has_finish_time()) return &e.state();
  }
  return nullptr;
}

Watched WatchToEnd(v1::SolverService::Stub& stub, const std::string& id, absl::Duration deadline) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(absl::ToInt64Milliseconds(Scaled(deadline))));
  v1::WatchJobRequest request;
  request.set_job_id(id);
  auto reader = stub.WatchJob(&context, request);
  Watched w;
  v1::JobEvent e;
  while (reader->Read(&e)) w.events.push_back(e);
  w.status = reader->Finish();
  return w;
}

v1::JobSpec SpecFor(const std::string& board, const std::string& goal_preset, const std::string& algorithm,
                    const std::string& heuristic) {
  v1::JobSpec spec;
  spec.mutable_start()->set_text(board);
  spec.set_goal_preset(goal_preset);
  spec.set_algorithm(algorithm);
  spec.set_heuristic(heuristic);
  return spec;
}

}  // namespace npuzzle::testing
