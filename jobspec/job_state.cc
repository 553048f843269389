#include "jobspec/job_state.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"

namespace npuzzle {
namespace {

using v1::JobState;
constexpr JobState kNew = v1::JOB_STATE_UNSPECIFIED;
constexpr JobState kQueued = v1::JOB_STATE_QUEUED;
constexpr JobState kRunning = v1::JOB_STATE_RUNNING;
constexpr JobState kDone = v1::JOB_STATE_DONE;
constexpr JobState kFailed = v1::JOB_STATE_FAILED;
constexpr JobState kCancelled = v1::JOB_STATE_CANCELLED;

// A queued job can end without running: a worker that kept it across a
// coordinator restart reports its result (or error) while it waits, and a
// client can cancel it.
constexpr JobTransition kTable[] = {
    {kNew, JobChange::kAdmit, kQueued},        {kNew, JobChange::kDecide, kDone},
    {kQueued, JobChange::kStart, kRunning},    {kRunning, JobChange::kRequeue, kQueued},
    {kQueued, JobChange::kFinish, kDone},      {kRunning, JobChange::kFinish, kDone},
    {kQueued, JobChange::kFail, kFailed},      {kRunning, JobChange::kFail, kFailed},
    {kQueued, JobChange::kCancel, kCancelled}, {kRunning, JobChange::kCancel, kCancelled},
};

constexpr std::array<std::pair<JobState, absl::string_view>, 6> kStateNames = {{
    {kNew, "unspecified"},
    {kQueued, "queued"},
    {kRunning, "running"},
    {kDone, "done"},
    {kFailed, "failed"},
    {kCancelled, "cancelled"},
}};

}  // namespace

std::span<const JobTransition> JobTransitions() { return kTable; }

absl::StatusOr<JobState> NextState(JobState from, JobChange change) {
  for (const JobTransition& t : kTable) {
    if (t.from == from && t.change == change) return t.to;
  }
  return absl::FailedPreconditionError(absl::StrCat("a ", JobStateName(from), " job cannot ", JobChangeName(change)));
}

bool IsFinal(JobState state) {
  return state != kNew && std::none_of(std::begin(kTable), std::end(kTable),
                                       [state](const JobTransition& t) { return t.from == state; });
}

absl::string_view JobStateName(JobState state) {
  for (const auto& [s, name] : kStateNames) {
    if (s == state) return name;
  }
  return "unknown";
}

std::optional<JobState> JobStateFromName(absl::string_view name) {
  for (const auto& [s, n] : kStateNames) {
    if (n == name && s != kNew) return s;
  }
  return std::nullopt;
}

absl::string_view JobChangeName(JobChange change) {
  switch (change) {
    case JobChange::kAdmit:
      return "be admitted";
    case JobChange::kDecide:
      return "be decided";
    case JobChange::kStart:
      return "start";
    case JobChange::kRequeue:
      return "be requeued";
    case JobChange::kFinish:
      return "finish";
    case JobChange::kFail:
      return "fail";
    case JobChange::kCancel:
      return "be cancelled";
  }
  return "change";
}

}  // namespace npuzzle
