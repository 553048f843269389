// Small builders the job manager's files share: the message that stops a
// job or unit on its worker, and timestamps from absl::Time.
#ifndef NPUZZLE_SERVICE_JOB_MESSAGES_H_
#define NPUZZLE_SERVICE_JOB_MESSAGES_H_

#include <string>

#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/protobuf/util/time_util.h"
#include "npuzzle/v1/worker.pb.h"

namespace npuzzle {

inline void SetTime(google::protobuf::Timestamp* t, absl::Time when) {
  *t = google::protobuf::util::TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(when));
}

inline v1::CoordinatorMessage CancelMessage(const std::string& job_id, int attempt) {
  v1::CoordinatorMessage m;
  m.mutable_cancel()->set_job_id(job_id);
  m.mutable_cancel()->set_attempt(attempt);
  return m;
}

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOB_MESSAGES_H_
