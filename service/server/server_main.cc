// npuzzle-server: the coordinator. Serves the public SolverService and the
// internal WorkerService, keeps jobs in SQLite under --data-dir, and by
// default runs one local worker process per core so one command runs the
// whole system. SIGTERM: refuse new jobs, let running ones finish for
// --drain-grace-ms, leave the rest to their workers after a restart, stop,
// exit 0. `npuzzle-server backup --to FILE` copies the job store.
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/cli.h"
#include "common/log.h"
#include "service/server/server.h"

int main(int argc, char** argv) {
  npuzzle::SetLogName("npuzzle-server");
  npuzzle::ServerConfig config;
  CLI::App app(
      "npuzzle-server: the npuzzle coordinator. Every flag also reads NPUZZLE_<FLAG> (--data-dir: "
      "NPUZZLE_DATA_DIR); the command line wins.",
      "npuzzle-server");
  npuzzle::cli::Configure(app);
  CLI::App* backup = npuzzle::AddServerFlags(app, &config);
  npuzzle::cli::ReadEnvironment(app);
  npuzzle::cli::ParseOrExit(app, argc, argv);
  // Abseil checks lock order on every lock unless told not to, which the
  // server's hot paths pay for; the test binaries keep the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  if (backup->parsed()) {
    const absl::Status copied = npuzzle::Server::Backup(config);
    if (!copied.ok()) npuzzle::Log(copied.message());
    return copied.ok() ? 0 : 1;
  }
  if (absl::Status s = npuzzle::Validate(config); !s.ok()) {
    npuzzle::Log(s.message());
    return 2;
  }
  // Every HTTP connection, gRPC connection and store file is a descriptor:
  // the usual soft limit of 1,024 is below what the connection limits
  // allow, so it is raised to the hard limit the system grants.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  // Signals are taken by one thread with sigwait; every other thread, and
  // gRPC's, inherit the block.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  npuzzle::Server server(config);
  // The signal is taken on a thread of its own, as a standby waits inside
  // Start until another coordinator goes, and must stop when told to.
  std::atomic<bool> start_failed = false;
  std::thread signal_taker([&] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    if (start_failed) return;
    npuzzle::Log(absl::StrCat("signal ", signal_number, ": draining (up to ", config.drain_grace_ms, " ms)"));
    server.Stop();
  });
  if (absl::Status s = server.Start(); !s.ok() && !absl::IsCancelled(s)) {
    npuzzle::Log(s.message());
    start_failed = true;
    pthread_kill(signal_taker.native_handle(), SIGTERM);
    signal_taker.join();
    // A flag's file that is missing or wrong is a usage error, as a bad
    // flag is; anything else (a busy data directory, a damaged store, a
    // port in use) is a failure to run.
    return absl::IsInvalidArgument(s) || absl::IsNotFound(s) ? 2 : 1;
  }
  signal_taker.join();
  npuzzle::Log("stopped");
  return 0;
}
