#include "service/server/local_workers.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"

namespace npuzzle {

namespace {

// By the time local workers are stopped the coordinator has waited for
// their jobs already: they need only hand back what is left.
constexpr absl::Duration kLocalWorkerDrain = absl::Seconds(2);

std::string WorkerBinary(const ServerConfig& config) {
  if (!config.worker_binary.empty()) return config.worker_binary;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (self.parent_path() / "npuzzle-worker").string();
}

}  // namespace

std::vector<std::string> LocalWorkers::Command(const ServerConfig& config, int worker_port,
                                               const std::vector<std::string>& tls_flags) {
  std::vector<std::string> argv = {
      WorkerBinary(config), absl::StrCat("--coordinator=127.0.0.1:", worker_port), "--concurrency=1",
      absl::StrCat("--data-dir=", config.data_dir), "--exit-with-parent",
      // They would share one port; the coordinator reports on each of them.
      "--metrics-listen=", absl::StrCat("--progress-interval-ms=", config.worker_progress_ms),
      absl::StrCat("--drain-grace-ms=", kLocalWorkerDrain / absl::Milliseconds(1))};
  argv.insert(argv.end(), tls_flags.begin(), tls_flags.end());
  return argv;
}

LocalWorkers::LocalWorkers(std::vector<std::string> command, int count) : command_(std::move(command)), slots_(count) {}

LocalWorkers::~LocalWorkers() { Stop(absl::ZeroDuration()); }

pid_t LocalWorkers::Spawn() {
  std::vector<char*> argv;
  for (const std::string& a : command_) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // The coordinator may block signals for its own signal thread; a worker
    // must not inherit that. It also ends when the coordinator does.
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(0);
    execv(argv[0], argv.data());
    std::perror("npuzzle-server: cannot start a local worker");
    _exit(127);
  }
  return pid;
}

namespace {

// "exited with status 3", "was killed by signal 9 (Killed)".
std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return absl::StrCat("was killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  }
  return absl::StrCat("stopped (wait status ", status, ")");
}

}  // namespace

void LocalWorkers::Start() {
  {
    absl::MutexLock lock(&mu_);
    for (Slot& s : slots_) {
      s.pid = Spawn();
      s.started = absl::Now();
    }
  }
  supervisor_ = std::thread([this] { Supervise(); });
}

void LocalWorkers::Supervise() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      const absl::Time now = absl::Now();
      for (Slot& s : slots_) {
        int status;
        if (s.pid > 0 && waitpid(s.pid, &status, WNOHANG) == s.pid) {
          // A worker that ran a while had a reason; one that dies at once
          // is retried ever more slowly.
          s.backoff = now - s.started > absl::Seconds(30) ? absl::Milliseconds(200)
                                                          : std::min(s.backoff * 2, absl::Seconds(10));
          Log(absl::StrCat("local worker ", s.pid, " ", DescribeExit(status), "; restarting in ",
                           absl::FormatDuration(s.backoff)));
          s.pid = 0;
          s.next_start = now + s.backoff;
        }
        if (s.pid == 0 && now >= s.next_start) {
          s.pid = Spawn();
          s.started = now;
        }
      }
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

void LocalWorkers::Stop(absl::Duration grace) {
  std::vector<pid_t> pids;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    for (Slot& s : slots_) {
      if (s.pid > 0) pids.push_back(s.pid);
      s.pid = 0;
    }
  }
  if (supervisor_.joinable()) supervisor_.join();
  for (pid_t pid : pids) kill(pid, SIGTERM);
  const absl::Time deadline = absl::Now() + grace;
  for (pid_t pid : pids) {
    int status;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (absl::Now() >= deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
}

}  // namespace npuzzle
