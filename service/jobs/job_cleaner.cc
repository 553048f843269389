#include "service/jobs/job_cleaner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace npuzzle {

JobCleaner::JobCleaner(JobStore* store, Options options) : store_(store), options_(options) {}

JobCleaner::~JobCleaner() {
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void JobCleaner::Start(std::function<void(int)> purged) {
  // A job outlives its retention by at most half of it, or a second. A
  // pass that finds nothing is two empty index ranges and writes nothing.
  const absl::Duration interval = options_.retain > absl::ZeroDuration()
                                      ? std::clamp(options_.retain / 2, absl::Milliseconds(100), absl::Seconds(1))
                                      : absl::Seconds(1);
  thread_ = std::thread([this, interval, purged = std::move(purged)] {
    absl::Status last = absl::OkStatus();
    while (!stop_.WaitForNotificationWithTimeout(interval)) {
      absl::StatusOr<int> deleted = RunOnce(absl::Now());
      // A store error is logged once, not once a pass.
      if (!deleted.ok() && last.ok()) Log(absl::StrCat("retention: ", deleted.status().message()));
      last = deleted.status();
      if (deleted.ok() && *deleted > 0 && purged) purged(*deleted);
    }
  });
}

absl::StatusOr<int> JobCleaner::RunOnce(absl::Time now) {
  int total = 0;
  for (;;) {
    absl::StatusOr<int> deleted = store_->PurgeFinished(now, options_.retain, options_.batch);
    if (!deleted.ok()) return deleted.status();
    total += *deleted;
    if (*deleted < options_.batch || stop_.HasBeenNotified()) return total;
  }
}

}  // namespace npuzzle
