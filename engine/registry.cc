#include "engine/registry.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "engine/algorithms/best_first.h"
#include "engine/algorithms/breadth_first.h"
#include "engine/algorithms/depth_first.h"
#include "engine/algorithms/ida_star.h"
#include "engine/heuristics/linear_conflict.h"
#include "engine/heuristics/manhattan.h"
#include "engine/heuristics/misplaced.h"
#include "engine/heuristics/pattern_database.h"
#include "engine/heuristics/reversal.h"
#include "engine/heuristics/zero.h"

namespace npuzzle {
namespace {

template <class Algorithm, bool kUsesHeuristic>
struct AlgorithmEntry {
  using Type = Algorithm;
  static constexpr bool kInformed = kUsesHeuristic;
  AlgorithmInfo info;
};

template <class H>
struct HeuristicEntry {
  using Type = H;
  HeuristicInfo info;
};

const auto kAlgorithmTable = std::make_tuple(
    AlgorithmEntry<BreadthFirst, false>{
        {"bfs", "breadth-first graph search", false, Optimality::kAlways}},
    AlgorithmEntry<DepthFirst, false>{
        {"dfs", "depth-first graph search (explicit stack; --max-depth bounds it)",
         false, Optimality::kNever}},
    AlgorithmEntry<IdaStar, false>{
        {"iddfs", "iterative deepening depth-first tree search", false,
         Optimality::kAlways}},
    AlgorithmEntry<AStar, false>{
        {"ucs", "uniform-cost search (Dijkstra)", false, Optimality::kAlways}},
    AlgorithmEntry<Greedy, true>{
        {"greedy", "greedy best-first search on h", true, Optimality::kNever}},
    AlgorithmEntry<AStar, true>{
        {"astar", "A* graph search with reopening", true,
         Optimality::kWithAdmissibleHeuristic}},
    AlgorithmEntry<WeightedAStar, true>{
        {"wastar", "weighted A*: f = g + w h (--weight, default 2)", true,
         Optimality::kWithAdmissibleAndWeightAtMostOne}},
    AlgorithmEntry<IdaStar, true>{
        {"idastar", "iterative deepening A* tree search", true,
         Optimality::kWithAdmissibleHeuristic}});

const auto kHeuristicTable = std::make_tuple(
    HeuristicEntry<ZeroHeuristic>{{"zero", "h = 0", true, true}},
    HeuristicEntry<Misplaced>{{"misplaced", "tiles off their goal cell", true, true}},
    HeuristicEntry<Manhattan>{{"manhattan", "sum of tile distances to goal", true, true}},
    HeuristicEntry<LinearConflict>{
        {"linear-conflict", "Manhattan plus row and column conflicts", true, true}},
    HeuristicEntry<Reversal>{
        {"reversal", "Manhattan plus adjacent tile-reversal penalty", true, true}},
    HeuristicEntry<PatternDatabase>{
        {"pdb", "additive pattern databases (--pdb-preset, --pdb-groups)", true,
         // Each table keeps the minimum over blank positions, so one move can
         // drop a group's value by more than one.
         false}});

// Heuristics that need options or can fail to build provide Create().
template <class H>
absl::StatusOr<H> MakeHeuristic(const Puzzle& puzzle, const HeuristicOptions& options) {
  if constexpr (requires { H::Create(puzzle, options); }) {
    return H::Create(puzzle, options);
  } else {
    return H(puzzle);
  }
}

template <class Table>
std::vector<decltype(std::get<0>(std::declval<Table>()).info)> InfoList(const Table& table) {
  return std::apply([](const auto&... e) { return std::vector{e.info...}; }, table);
}

const std::vector<AlgorithmInfo>& AlgorithmList() {
  static const auto* list = new std::vector<AlgorithmInfo>(InfoList(kAlgorithmTable));
  return *list;
}

const std::vector<HeuristicInfo>& HeuristicList() {
  static const auto* list = new std::vector<HeuristicInfo>(InfoList(kHeuristicTable));
  return *list;
}

// Calls f(entry) for the table entry called `name`; false if none is.
template <class Table, class F>
bool VisitByName(const Table& table, absl::string_view name, F&& f) {
  return std::apply(
      [&](const auto&... entry) {
        return ((entry.info.name == name && (f(entry), true)) || ...);
      },
      table);
}

template <class Info>
absl::Status CheckName(absl::string_view kind, absl::string_view name,
                       const std::vector<Info>& known) {
  for (const Info& info : known) {
    if (info.name == name) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown ", kind, " '", name, "' (known: ",
      absl::StrJoin(known, ", ",
                    [](std::string* out, const Info& i) { absl::StrAppend(out, i.name); }),
      ")"));
}

}  // namespace

std::span<const AlgorithmInfo> Algorithms() { return AlgorithmList(); }
std::span<const HeuristicInfo> Heuristics() { return HeuristicList(); }

const AlgorithmInfo* FindAlgorithm(absl::string_view name) {
  for (const AlgorithmInfo& a : AlgorithmList()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const HeuristicInfo* FindHeuristic(absl::string_view name) {
  for (const HeuristicInfo& h : HeuristicList()) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

absl::Status CheckAlgorithmName(absl::string_view name) {
  return CheckName("algorithm", name, AlgorithmList());
}

absl::Status CheckHeuristicName(absl::string_view name) {
  return CheckName("heuristic", name, HeuristicList());
}

namespace {

// The outcome of a solve stopped before its search began (while a
// heuristic's tables were built), or the error if it was not a stop.
absl::StatusOr<SearchOutcome> StoppedBeforeSearch(const absl::Status& why, absl::Time begin) {
  SearchOutcome out;
  switch (why.code()) {
    case absl::StatusCode::kCancelled: out.status = SearchStatus::kCancelled; break;
    case absl::StatusCode::kDeadlineExceeded: out.status = SearchStatus::kTimeLimit; break;
    case absl::StatusCode::kResourceExhausted: out.status = SearchStatus::kMemoryLimit; break;
    default: return why;
  }
  out.stats.elapsed = absl::Now() - begin;
  return out;
}

}  // namespace

absl::StatusOr<SearchOutcome> RunSearch(const SearchSpec& spec,
                                        const Puzzle& puzzle,
                                        const Tiles& start) {
  // The time limit covers building the heuristic's tables as well as the
  // search, and so do cancellation and the memory limit.
  const absl::Time begin = absl::Now();
  const SearchLimits& limits = spec.options.limits;
  const absl::Time deadline =
      limits.max_time == absl::InfiniteDuration() ? absl::InfiniteFuture() : begin + limits.max_time;
  HeuristicOptions heuristic_options = spec.heuristic_options;
  HeuristicBuildLimits& build = heuristic_options.build_limits;
  build.cancel = spec.options.cancel;
  build.deadline = deadline;
  build.max_memory_bytes = limits.max_memory_bytes;
  build.activity_interval = spec.options.progress_interval;
  if (spec.options.on_progress) {
    build.on_activity = [&](absl::string_view activity) {
      Progress p;
      p.activity = std::string(activity);
      p.elapsed = absl::Now() - begin;
      spec.options.on_progress(p);
    };
  }

  std::optional<absl::StatusOr<SearchOutcome>> out;
  auto run_with = [&](auto algorithm_entry, const auto& heuristic) {
    using A = typename decltype(algorithm_entry)::Type;
    using H = std::decay_t<decltype(heuristic)>;
    SearchOptions options = spec.options;
    if (deadline != absl::InfiniteFuture()) {
      options.limits.max_time = std::max(deadline - absl::Now(), absl::Nanoseconds(1));
    }
    const SearchProblem<H> problem{puzzle, heuristic, start, options, spec.weight};
    out = A::Run(problem);
  };
  const bool known_algorithm = VisitByName(kAlgorithmTable, spec.algorithm, [&](const auto& a) {
    if constexpr (!std::decay_t<decltype(a)>::kInformed) {
      run_with(a, ZeroHeuristic(puzzle));
    } else {
      const bool known_heuristic = VisitByName(kHeuristicTable, spec.heuristic, [&](const auto& h) {
        using H = typename std::decay_t<decltype(h)>::Type;
        absl::StatusOr<H> heuristic = MakeHeuristic<H>(puzzle, heuristic_options);
        if (heuristic.ok()) {
          run_with(a, *heuristic);
        } else {
          out = StoppedBeforeSearch(heuristic.status(), begin);
          if (out->ok() && heuristic_options.on_message) heuristic_options.on_message(heuristic.status().message());
        }
      });
      if (!known_heuristic) out = CheckHeuristicName(spec.heuristic);
    }
  });
  if (!known_algorithm) return CheckAlgorithmName(spec.algorithm);
  return *std::move(out);
}

}  // namespace npuzzle
