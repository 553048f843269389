#include "jobspec/job_spec.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/board_parser.h"
#include "engine/goals.h"
#include "engine/limits.h"
#include "engine/registry.h"

namespace npuzzle {
namespace {

absl::Status Prefixed(absl::string_view field, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(field, ": ", s.message()));
}

bool IsEmpty(const v1::Board& b) { return b.tiles().empty() && b.text().empty(); }

}  // namespace

v1::Board BoardToProto(const Board& board) {
  v1::Board b;
  b.set_rows(board.rows());
  b.set_cols(board.cols());
  for (uint8_t t : board.tiles()) b.add_tiles(t);
  return b;
}

absl::StatusOr<Board> BoardFromProto(const v1::Board& b, int rows, int cols) {
  rows = b.rows() != 0 ? b.rows() : rows;
  cols = b.cols() != 0 ? b.cols() : cols;
  if (!b.tiles().empty() && !b.text().empty()) {
    return absl::InvalidArgumentError("give tiles or text, not both");
  }
  if (IsEmpty(b)) return absl::InvalidArgumentError("no board given");
  if (!b.text().empty()) return ParseBoard(b.text(), rows, cols);
  std::string text;
  for (int t : b.tiles()) absl::StrAppend(&text, t, " ");
  return ParseBoard(text, rows, cols);
}

absl::StatusOr<SolveRequest> RequestFromSpec(const v1::JobSpec& spec) {
  SolveRequest r;
  absl::StatusOr<Board> start = BoardFromProto(spec.start());
  if (!start.ok()) return Prefixed("start", start.status());
  r.start = *std::move(start);

  if (!IsEmpty(spec.goal()) && !spec.goal_preset().empty()) {
    return absl::InvalidArgumentError("goal: give a goal board or a goal preset, not both");
  }
  absl::StatusOr<Board> goal =
      IsEmpty(spec.goal())
          ? GoalPreset(spec.goal_preset().empty() ? "standard" : spec.goal_preset(), r.start.rows(), r.start.cols())
          : BoardFromProto(spec.goal(), r.start.rows(), r.start.cols());
  if (!goal.ok()) return Prefixed("goal", goal.status());
  r.goal = *std::move(goal);

  if (!spec.algorithm().empty()) r.algorithm = spec.algorithm();
  if (!spec.heuristic().empty()) r.heuristic = spec.heuristic();
  if (spec.has_weight()) r.weight = spec.weight();
  r.heuristic_options.pdb_preset = spec.pdb_preset();
  r.heuristic_options.pdb_groups = spec.pdb_groups();
  r.heuristic_options.pdb_zero_aware = spec.pdb_zero_aware();

  const v1::Limits& l = spec.limits();
  absl::StatusOr<SearchLimits> limits =
      ConvertLimits({l.max_nodes(), l.max_time_ms(), l.max_memory_mb(), l.max_depth()}, LimitNames::kProto);
  if (!limits.ok()) return limits.status();
  r.options.limits = *limits;
  if (spec.has_seed()) r.options.seed = spec.seed();
  if (spec.threads() < 0) return absl::InvalidArgumentError("threads must not be negative");
  r.options.threads = std::max(1, spec.threads());
  r.max_gap = spec.max_gap();
  if (spec.max_workers() < 0 || spec.max_workers() > kMaxWorkersPerJob) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_workers ", spec.max_workers(), " is out of range (0 to ", kMaxWorkersPerJob, ")"));
  }
  if (spec.max_workers() > 1) {
    if (absl::Status s = CheckSplits(r.algorithm, "max_workers above 1"); !s.ok()) return s;
  }

  if (absl::Status s = ValidateSolveRequest(r); !s.ok()) return s;
  return r;
}

bool IsSpecError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kUnimplemented:
      return true;
    default:
      return false;
  }
}

v1::JobSpec SpecFromRequest(const SolveRequest& request) {
  v1::JobSpec spec;
  *spec.mutable_start() = BoardToProto(request.start);
  *spec.mutable_goal() = BoardToProto(request.goal);
  spec.set_algorithm(request.algorithm);
  spec.set_heuristic(request.heuristic);
  if (request.weight) spec.set_weight(*request.weight);
  spec.set_pdb_preset(request.heuristic_options.pdb_preset);
  spec.set_pdb_groups(request.heuristic_options.pdb_groups);
  spec.set_pdb_zero_aware(request.heuristic_options.pdb_zero_aware);
  const SearchLimits& limits = request.options.limits;
  spec.mutable_limits()->set_max_nodes(limits.max_expanded);
  if (limits.max_time != absl::InfiniteDuration()) {
    spec.mutable_limits()->set_max_time_ms(absl::ToInt64Milliseconds(limits.max_time));
  }
  spec.mutable_limits()->set_max_memory_mb(limits.max_memory_bytes >> 20);
  spec.mutable_limits()->set_max_depth(limits.max_depth);
  if (request.options.seed) spec.set_seed(*request.options.seed);
  spec.set_threads(request.options.threads);
  spec.set_max_gap(request.max_gap);
  return spec;
}

v1::Result ResultToProto(const SolveResult& result) {
  v1::Result r;
  r.set_status(std::string(StatusName(result.status)));
  r.set_moves(MovesToString(result.moves));
  for (int t : result.tile_moves) r.add_tile_moves(t);
  r.set_length(static_cast<int>(result.moves.size()));
  r.set_optimal(result.optimal);
  r.set_algorithm(result.algorithm);
  r.set_heuristic(result.heuristic);
  r.set_lower_bound(result.lower_bound);
  r.set_chosen(result.chosen);
  r.set_stopped_by(result.stopped_by);
  v1::Stats* s = r.mutable_stats();
  s->set_expanded(result.stats.expanded);
  s->set_generated(result.stats.generated);
  s->set_duplicates(result.stats.duplicates);
  s->set_max_open(result.stats.max_open);
  s->set_iterations(result.stats.iterations);
  s->set_start_h(result.stats.start_h);
  s->set_elapsed_ms(absl::ToDoubleMilliseconds(result.stats.elapsed));
  s->set_nodes_per_second(result.stats.nodes_per_second);
  s->set_resumed_subtrees(result.stats.resumed_subtrees);
  return r;
}

SolveResult ResultFromProto(const v1::Result& r) {
  SolveResult result;
  result.status = StatusFromName(r.status()).value_or(SearchStatus::kCancelled);
  result.moves = ParseMoves(r.moves()).value_or(std::vector<Dir>{});
  result.tile_moves.assign(r.tile_moves().begin(), r.tile_moves().end());
  result.optimal = r.optimal();
  result.algorithm = r.algorithm();
  result.heuristic = r.heuristic();
  result.lower_bound = r.lower_bound();
  result.chosen = r.chosen();
  result.stopped_by = r.stopped_by();
  SearchStats& s = result.stats;
  s.expanded = r.stats().expanded();
  s.generated = r.stats().generated();
  s.duplicates = r.stats().duplicates();
  s.max_open = r.stats().max_open();
  s.iterations = r.stats().iterations();
  s.start_h = r.stats().start_h();
  s.elapsed = absl::Milliseconds(r.stats().elapsed_ms());
  s.nodes_per_second = r.stats().nodes_per_second();
  s.resumed_subtrees = r.stats().resumed_subtrees();
  return result;
}

v1::Progress ProgressToProto(const Progress& p) {
  v1::Progress m;
  m.set_expanded(p.expanded);
  m.set_generated(p.generated);
  m.set_open_size(p.open_size);
  m.set_bound(p.bound);
  m.set_best_h(p.best_h);
  m.set_elapsed_ms(absl::ToDoubleMilliseconds(p.elapsed));
  m.set_nodes_per_second(p.nodes_per_second);
  m.set_activity(p.activity);
  m.set_best_length(p.best_length);
  m.set_lower_bound(p.lower_bound);
  if (p.fraction_done) m.set_fraction_done(*p.fraction_done);
  if (p.time_left) m.set_eta_ms(absl::ToInt64Milliseconds(*p.time_left));
  return m;
}

Progress ProgressFromProto(const v1::Progress& m) {
  Progress p;
  p.expanded = m.expanded();
  p.generated = m.generated();
  p.open_size = m.open_size();
  p.bound = m.bound();
  p.best_h = m.best_h();
  p.elapsed = absl::Milliseconds(m.elapsed_ms());
  p.nodes_per_second = m.nodes_per_second();
  p.activity = m.activity();
  p.best_length = m.best_length();
  p.lower_bound = m.lower_bound();
  if (m.has_fraction_done()) p.fraction_done = m.fraction_done();
  if (m.has_eta_ms()) p.time_left = absl::Milliseconds(m.eta_ms());
  return p;
}

}  // namespace npuzzle
