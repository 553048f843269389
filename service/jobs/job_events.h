// JobEvents: who follows each unfinished job, and what they are told.
// Watchers receive every stored change of state and the running
// attempt's progress; waiters are called once, with the final job or, at
// their deadline, the job as it then stands. The job manager reports each
// change here in the order it happened; events and calls never block.
#ifndef NPUZZLE_SERVICE_JOBS_JOB_EVENTS_H_
#define NPUZZLE_SERVICE_JOBS_JOB_EVENTS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "npuzzle/v1/solver.pb.h"
#include "service/jobs/job_watch.h"

namespace npuzzle {

class JobEvents {
 public:
  using Done = std::function<void(const v1::Job&)>;

  // `now` is the job's current state: the watch's first event.
  void Watch(const v1::Job& now, std::shared_ptr<JobWatch> watch);
  void Wait(const std::string& id, absl::Time deadline, Done done);

  void State(const v1::Job& job);
  void Progress(const std::string& id, const v1::Progress& progress);
  // The job's final state: its watchers' last event. Returns its waiters'
  // calls, for the caller to make once it holds no lock, and forgets the
  // job.
  std::vector<std::function<void()>> Final(const v1::Job& job);

  // Waiters whose deadline has passed, forgotten: each with its job's id.
  std::vector<std::pair<std::string, Done>> Expired(absl::Time now);

 private:
  struct Waiter {
    absl::Time deadline;
    Done done;
  };
  struct Followers {
    std::vector<std::shared_ptr<JobWatch>> watches;
    std::vector<Waiter> waiters;
  };

  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Followers> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_JOB_EVENTS_H_
