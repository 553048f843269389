#include "engine/anytime/table_watch.h"

#include "absl/time/clock.h"

namespace npuzzle {

TableWatch::TableWatch(const SolveRequest& request)
    : goal_(request.goal),
      fits_(request.goal.rows() <= kMaxSide && request.goal.cols() <= kMaxSide &&
            PatternDatabase::ValidateOptions(request.goal, request.heuristic_options).ok()),
      options_(request.heuristic_options) {
  options_.pdb_held_only = true;
  // Held tables need no build limits, and their news is not this solve's.
  options_.on_message = nullptr;
  options_.build_limits = HeuristicBuildLimits();
}

bool TableWatch::Poll(absl::Duration interval) {
  if (!fits_ || Get() != nullptr) return false;
  const absl::Time now = absl::Now();
  if (now < next_look_) return false;
  next_look_ = now + interval;
  const bool first = !looked_;
  looked_ = true;
  absl::StatusOr<PatternDatabase> tables = PatternDatabase::Create(Puzzle(goal_), options_);
  if (!tables.ok()) {
    if (first) PatternDatabase::LoadInBackground(goal_, options_);
    return false;
  }
  absl::MutexLock lock(&mu_);
  tables_ = std::make_shared<const PatternDatabase>(*std::move(tables));
  held_from_start_ = first;
  found_after_ = now - created_;
  return true;
}

bool TableWatch::held_from_start() const {
  absl::MutexLock lock(&mu_);
  return held_from_start_;
}

std::shared_ptr<const PatternDatabase> TableWatch::Get() const {
  absl::MutexLock lock(&mu_);
  return tables_;
}

absl::Duration TableWatch::found_after() const {
  absl::MutexLock lock(&mu_);
  return found_after_;
}

}  // namespace npuzzle
