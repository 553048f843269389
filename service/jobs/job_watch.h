// JobWatch: the events one watcher of a job has yet to receive. The
// coordinator pushes without ever waiting; the watcher's stream takes them
// at its own pace. State changes and the final event are always kept;
// progress is collapsed to the newest, and dropped while the backlog is
// long, so a slow reader costs a bounded amount of memory.
#ifndef NPUZZLE_SERVICE_JOBS_JOB_WATCH_H_
#define NPUZZLE_SERVICE_JOBS_JOB_WATCH_H_

#include <deque>
#include <functional>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

class JobWatch {
 public:
  static constexpr size_t kMaxBacklog = 64;

  // `final`: the job has finished; nothing follows this event.
  void Push(const v1::JobEvent& event, bool final);

  // The next event, if one is waiting. `*last` tells whether it is the
  // final one.
  std::optional<v1::JobEvent> Next(bool* last);

  // Called (from the pushing thread) whenever an event arrives.
  void SetWakeup(std::function<void()> wakeup);

  // The reader went away: further pushes are dropped.
  void Abandon();

 private:
  mutable absl::Mutex mu_;
  std::deque<v1::JobEvent> events_ ABSL_GUARDED_BY(mu_);
  bool final_queued_ ABSL_GUARDED_BY(mu_) = false;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> wakeup_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_JOB_WATCH_H_
