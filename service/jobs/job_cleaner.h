// Retention: deletes finished jobs once they are older than the server's
// --retain-finished or their own retain_seconds, so that a service that runs for months keeps a store
// of bounded size. A small service of its own, off the submit path: it
// talks to the store alone, on its own thread, a bounded batch a
// transaction, so a submit waits for at most one batch behind it. Queued
// and running jobs are never touched (the store deletes only final rows).
#ifndef NPUZZLE_SERVICE_JOBS_JOB_CLEANER_H_
#define NPUZZLE_SERVICE_JOBS_JOB_CLEANER_H_

#include <functional>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "service/store/job_store.h"

namespace npuzzle {

class JobCleaner {
 public:
  struct Options {
    absl::Duration retain;  // finished longer ago than this: deleted (0: kept, unless their own retain ends)
    int batch = 500;        // rows deleted per transaction
  };

  JobCleaner(JobStore* store, Options options);
  ~JobCleaner();  // stops the thread, if started

  // Passes every half retention (between 100 ms and 1 s) until
  // destroyed; `purged` hears of each pass that deleted something.
  void Start(std::function<void(int)> purged);

  // One pass: batches until one deletes less than a whole batch could.
  absl::StatusOr<int> RunOnce(absl::Time now);

 private:
  JobStore* const store_;
  const Options options_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_JOB_CLEANER_H_
