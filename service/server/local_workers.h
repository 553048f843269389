// LocalWorkers: worker processes the coordinator starts on its own machine
// and keeps running: a worker that exits is started again (with a growing
// pause if it keeps failing), and all of them stop with the coordinator.
// Each is told to exit if the coordinator dies, so none is left behind.
#ifndef NPUZZLE_SERVICE_SERVER_LOCAL_WORKERS_H_
#define NPUZZLE_SERVICE_SERVER_LOCAL_WORKERS_H_

#include <sys/types.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/server/server_config.h"

namespace npuzzle {

class LocalWorkers {
 public:
  // The command line of a local worker of `config` that dials the worker
  // port `worker_port` on loopback, with `tls_flags` (see Server).
  static std::vector<std::string> Command(const ServerConfig& config, int worker_port,
                                          const std::vector<std::string>& tls_flags);

  // `command`: the worker binary and its arguments.
  LocalWorkers(std::vector<std::string> command, int count);
  ~LocalWorkers();

  void Start();
  // SIGTERM to every worker, then SIGKILL to any still there after `grace`.
  void Stop(absl::Duration grace);

 private:
  struct Slot {
    pid_t pid = 0;
    absl::Time next_start;
    absl::Duration backoff = absl::Milliseconds(200);
    absl::Time started;
  };

  pid_t Spawn();
  void Supervise();

  const std::vector<std::string> command_;
  absl::Mutex mu_;
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread supervisor_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_SERVER_LOCAL_WORKERS_H_
