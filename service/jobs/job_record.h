// JobRecord: the coordinator's working copy of one unfinished job, with
// what it must remember beside the stored Job: whether a client asked to
// cancel it, its final row while that is being stored, the attempt
// numbers it may use, and, while it runs spread over workers, its split.
#ifndef NPUZZLE_SERVICE_JOBS_JOB_RECORD_H_
#define NPUZZLE_SERVICE_JOBS_JOB_RECORD_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/protobuf/util/time_util.h"
#include "npuzzle/v1/solver.pb.h"
#include "service/split/split_job.h"

namespace npuzzle {

struct JobRecord {
  v1::Job job;  // as last changed: stored, or about to be
  int64_t seq = 0;
  bool cancel_requested = false;
  // Set while the job's final row is being stored; until then the job is
  // reported as `job`, and nothing else may happen to it.
  std::optional<v1::Job> final_job;
  double node_rate = 0;  // from the running attempt's latest progress
  // The attempt in the job's last durable row, and the least number its
  // next attempt may have (see JobManager::Assign).
  int durable_attempt = 0;
  int min_attempt = 0;
  // Running when the coordinator restarted, and not yet reclaimed by its
  // worker: handed to another, it counts as lost.
  bool unclaimed = false;
  // Set while a job spread over workers runs: its units are out, not it.
  std::unique_ptr<SplitJob> split;

  bool ending() const { return final_job.has_value(); }
  // The number its next attempt gets: never one given before, even by a
  // coordinator that crashed before storing it.
  int NextAttempt() const { return std::max(job.attempt() + 1, min_attempt); }
};

inline void SetTime(google::protobuf::Timestamp* t, absl::Time when) {
  *t = google::protobuf::util::TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(when));
}

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_JOB_RECORD_H_
