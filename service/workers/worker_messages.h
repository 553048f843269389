// What the coordinator tells a worker about one of its leases: stop, or
// hand back part of a work unit.
#ifndef NPUZZLE_SERVICE_WORKERS_WORKER_MESSAGES_H_
#define NPUZZLE_SERVICE_WORKERS_WORKER_MESSAGES_H_

#include "npuzzle/v1/worker.pb.h"
#include "service/workers/lease.h"

namespace npuzzle {

inline v1::CoordinatorMessage CancelMessage(const LeaseKey& lease, int attempt) {
  v1::CoordinatorMessage m;
  m.mutable_cancel()->set_job_id(lease.job_id);
  m.mutable_cancel()->set_unit_id(lease.unit);
  m.mutable_cancel()->set_attempt(attempt);
  return m;
}

inline v1::CoordinatorMessage HandBackMessage(const LeaseKey& lease, int attempt) {
  v1::CoordinatorMessage m;
  m.mutable_hand_back()->set_job_id(lease.job_id);
  m.mutable_hand_back()->set_unit_id(lease.unit);
  m.mutable_hand_back()->set_attempt(attempt);
  return m;
}

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_WORKERS_WORKER_MESSAGES_H_
