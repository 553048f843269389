// A job's lifecycle: the one table of which changes move a job from which
// state to which. The coordinator applies every change through it
// (service/jobs/job_lifecycle.h) and refuses any the table does not list;
// clients ask it which states are final.
//
//   (new) --admit--> QUEUED --start--> RUNNING --finish/fail/cancel--> DONE, FAILED, CANCELLED
//   (new) --decide--> DONE            RUNNING --requeue--> QUEUED
//                     QUEUED --finish/fail/cancel--> DONE, FAILED, CANCELLED
//
// A final state is one no change leaves: the table decides that too, so a
// job that has ended never changes again, and reports one final result.
#ifndef NPUZZLE_JOBSPEC_JOB_STATE_H_
#define NPUZZLE_JOBSPEC_JOB_STATE_H_

#include <optional>
#include <span>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

enum class JobChange {
  kAdmit,    // submitted, and solvable: it waits for a worker
  kDecide,   // submitted, and decided without a search (unsolvable)
  kStart,    // a worker takes it (or keeps it after a coordinator restart), or its units go out
  kRequeue,  // its worker was lost or let it go, its start could not be stored, or the coordinator restarted
  kFinish,   // a result: solved, unsolvable, or stopped by a limit
  kFail,     // it could not run, or its workers were lost too often
  kCancel,   // a client cancelled it
};

struct JobTransition {
  v1::JobState from;  // JOB_STATE_UNSPECIFIED: a job not yet stored
  JobChange change;
  v1::JobState to;
};

// Every allowed transition; anything else is refused.
std::span<const JobTransition> JobTransitions();

// The state `change` takes a job in state `from` to, or FailedPrecondition
// naming both when the table has no such row.
absl::StatusOr<v1::JobState> NextState(v1::JobState from, JobChange change);

// Whether no change leaves `state` (DONE, FAILED, CANCELLED).
bool IsFinal(v1::JobState state);

// "queued", "running", "done", "failed", "cancelled" ("unspecified" for 0):
// the names the CLI, HTTP queries and metrics use; and back (nullopt for
// an unknown name).
absl::string_view JobStateName(v1::JobState state);
std::optional<v1::JobState> JobStateFromName(absl::string_view name);
absl::string_view JobChangeName(JobChange change);

}  // namespace npuzzle

#endif  // NPUZZLE_JOBSPEC_JOB_STATE_H_
