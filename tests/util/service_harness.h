// Real npuzzle processes for end-to-end tests: a coordinator and workers on
// loopback, each with its own log, killable with real signals.
#ifndef NPUZZLE_TESTS_UTIL_SERVICE_HARNESS_H_
#define NPUZZLE_TESTS_UTIL_SERVICE_HARNESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/tls.h"
#include "npuzzle/v1/solver.grpc.pb.h"
#include "tests/util/process_util.h"

namespace npuzzle::testing {

// Checks that a finished job's moves replay from its start to its goal.
void ExpectReplays(const v1::Job& job);

// A free TCP port on loopback (bound and released; fine for tests), below
// the kernel's ephemeral ports and never one of the service's defaults.
int FreePort();

// Polls until `holds` or the scaled timeout; whether it came to hold.
template <class Predicate>
bool Eventually(absl::Duration timeout, Predicate holds) {
  const absl::Time deadline = absl::Now() + Scaled(timeout);
  while (!holds()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return true;
}

class Process {
 public:
  // Starts argv with stdout and stderr appended to `log`.
  Process(std::vector<std::string> argv, std::string log);
  ~Process();  // SIGTERM if still running (a test failure unless it exits 0), then SIGKILL
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int signal);
  // Waits for the exit; its status code, or -1 on timeout / by signal.
  // Like every wait here, the timeout is stretched by Scaled().
  int Wait(absl::Duration timeout);
  bool Running();
  std::string Log() const;

 private:
  pid_t pid_ = 0;
  bool reaped_ = false;
  bool signalled_ = false;  // by the test
  int status_ = 0;
  std::string log_;
};

// A coordinator on fixed loopback ports and a data directory that survive
// restarts.
class Coordinator {
 public:
  Coordinator(const TempDir& dir, int local_workers, std::vector<std::string> extra_flags = {});
  // How stub() dials: set before Start for a server with TLS or tokens.
  void set_client(ClientTls tls, std::string token) {
    client_tls_ = std::move(tls);
    token_ = std::move(token);
  }
  // (Re)starts the server process and waits until it answers; a server
  // that does not answer fails the test, with its log.
  void Start();
  // The two halves of Start: the process started, and then awaited until
  // it listens and answers, or `timeout` passes; false then.
  void Launch();
  bool AwaitReady(absl::Duration timeout);
  std::unique_ptr<Process>& process() { return process_; }
  std::string client_address() const;
  std::string worker_address() const;
  v1::SolverService::Stub& stub() { return *stub_; }
  std::string data_dir() const { return data_dir_; }
  int metrics_port() const { return metrics_port_; }
  int http_port() const { return http_port_; }

 private:
  std::string dir_;
  std::string data_dir_;
  int local_workers_;
  std::vector<std::string> extra_flags_;
  ClientTls client_tls_;
  std::string token_;
  int client_port_, worker_port_;
  int metrics_port_ = 0;
  int http_port_ = 0;
  int starts_ = 0;
  std::unique_ptr<Process> process_;
  std::unique_ptr<v1::SolverService::Stub> stub_;
};

std::unique_ptr<Process> StartWorker(const Coordinator& c, const TempDir& dir, const std::string& id,
                                     std::vector<std::string> extra_flags = {});

// A client of `address` with its own connection (TLS and token optional).
std::unique_ptr<v1::SolverService::Stub> Dial(const std::string& address, const ClientTls& tls = {},
                                              const std::string& token = "");

// Client helpers over the real API.
absl::StatusOr<v1::Job> Submit(v1::SolverService::Stub& stub, const v1::JobSpec& spec);
absl::StatusOr<v1::Job> GetJob(v1::SolverService::Stub& stub, const std::string& id);
// CancelJob's status, with the job it answers in `job`.
grpc::Status Cancel(v1::SolverService::Stub& stub, const std::string& id, v1::Job* job);
// Waits until the job is in `state` (or the timeout passes).
absl::StatusOr<v1::Job> AwaitState(v1::SolverService::Stub& stub, const std::string& id, v1::JobState state,
                                   absl::Duration timeout);
// Waits until the job store holds the job in `state`. GetJob may show a
// change a moment before it is durable; ListJobs filters on stored states.
absl::Status AwaitStoredState(v1::SolverService::Stub& stub, const std::string& id, v1::JobState state,
                              absl::Duration timeout);
// Every event of WatchJob until the stream ends (or the deadline passes).
struct Watched {
  std::vector<v1::JobEvent> events;
  grpc::Status status;
  int finals() const;  // events carrying a finished job
  const v1::Job* final_job() const;
};
Watched WatchToEnd(v1::SolverService::Stub& stub, const std::string& id, absl::Duration deadline);

v1::JobSpec SpecFor(const std::string& board, const std::string& goal_preset = "standard",
                    const std::string& algorithm = "astar", const std::string& heuristic = "manhattan");

}  // namespace npuzzle::testing

#endif  // NPUZZLE_TESTS_UTIL_SERVICE_HARNESS_H_
