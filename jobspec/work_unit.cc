#include "jobspec/work_unit.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jobspec/checkpoint.h"
#include "jobspec/job_spec.h"

namespace npuzzle {

v1::JobSpec UnitSpec(const v1::JobSpec& job, uint64_t nodes_left, absl::Duration time_left) {
  v1::JobSpec spec = job;
  spec.set_max_workers(0);
  spec.set_threads(1);
  spec.clear_labels();
  spec.clear_request_id();
  v1::Limits* limits = spec.mutable_limits();
  if (limits->max_nodes() > 0) limits->set_max_nodes(std::max<uint64_t>(1, nodes_left));
  if (limits->max_time_ms() > 0) {
    limits->set_max_time_ms(static_cast<uint64_t>(std::max<int64_t>(1, absl::ToInt64Milliseconds(time_left))));
  }
  return spec;
}

absl::StatusOr<SolveRequest> RequestFromAssignment(const v1::Assignment& assignment, HandBack* hand_back) {
  absl::StatusOr<SolveRequest> request = RequestFromSpec(assignment.spec());
  if (!request.ok()) return request;
  const v1::Checkpoint& checkpoint = assignment.checkpoint();
  absl::StatusOr<std::vector<Dir>> best = ParseMoves(checkpoint.best_moves());
  if (!best.ok()) return absl::InvalidArgumentError(absl::StrCat("checkpoint.best_moves: ", best.status().message()));
  request->resume = {*std::move(best), checkpoint.lower_bound()};
  request->options.resume_bound = checkpoint.bound();
  request->options.resume_subtrees = SubtreesDone(checkpoint);
  if (!assignment.has_unit()) return request;
  absl::StatusOr<std::vector<Dir>> prefix = ParseMoves(assignment.unit().prefix());
  if (!prefix.ok()) return absl::InvalidArgumentError(absl::StrCat("unit.prefix: ", prefix.status().message()));
  request->options.subtree = SearchOptions::SubtreePass{*std::move(prefix), assignment.unit().bound(), hand_back};
  return request;
}

}  // namespace npuzzle
