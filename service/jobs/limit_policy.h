// LimitPolicy: the service's rules for a job's limits. Limits a spec
// leaves at 0 take the service's defaults; no spec may exceed a ceiling
// (so no job runs forever by accident); and a resubmitted spec is compared
// with the stored one as the client wrote it, before defaults were filled.
#ifndef NPUZZLE_SERVICE_JOBS_LIMIT_POLICY_H_
#define NPUZZLE_SERVICE_JOBS_LIMIT_POLICY_H_

#include "absl/status/status.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

struct LimitPolicy {
  v1::Limits defaults;
  v1::Limits ceilings;  // 0: none
  int max_threads = 64;

  // Fills unset limits from the defaults; InvalidArgument naming the field
  // and the ceiling for any limit above one.
  absl::Status Apply(v1::JobSpec& spec) const;
};

// Whether a resubmission asks for the job whose stored spec is `stored`:
// the same spec, where limits the client left unset match whatever
// defaults were filled in.
bool SameRequest(v1::JobSpec submitted, v1::JobSpec stored);

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_LIMIT_POLICY_H_
