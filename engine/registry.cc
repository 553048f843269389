#include "engine/registry.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
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
        {"bfs", "breadth-first graph search", false, Optimality::kAlways, false, false}},
    AlgorithmEntry<DepthFirst, false>{{"dfs", "depth-first graph search (explicit stack; --max-depth bounds it)", false,
                                       Optimality::kNever, false, false}},
    AlgorithmEntry<IdaStar, false>{
        {"iddfs", "iterative deepening depth-first tree search", false, Optimality::kAlways, false, true}},
    AlgorithmEntry<AStar, false>{{"ucs", "uniform-cost search (Dijkstra)", false, Optimality::kAlways, false, false}},
    AlgorithmEntry<Greedy, true>{{"greedy", "greedy best-first search on h", true, Optimality::kNever, false, false}},
    AlgorithmEntry<AStar, true>{
        {"astar", "A* graph search with reopening", true, Optimality::kWithAdmissibleHeuristic, false, false}},
    AlgorithmEntry<WeightedAStar, true>{{"wastar", "weighted A*: f = g + w h (--weight, default 2)", true,
                                         Optimality::kWithAdmissibleAndWeightAtMostOne, true, false}},
    AlgorithmEntry<IdaStar, true>{{"idastar", "iterative deepening A* tree search (--threads)", true,
                                   Optimality::kWithAdmissibleHeuristic, false, true}});

const auto kHeuristicTable = std::make_tuple(
    HeuristicEntry<ZeroHeuristic>{{"zero", "h = 0", true, true, false}},
    HeuristicEntry<Misplaced>{{"misplaced", "tiles off their goal cell", true, true, false}},
    HeuristicEntry<Manhattan>{{"manhattan", "sum of tile distances to goal", true, true, false}},
    HeuristicEntry<LinearConflict>{{"linear-conflict", "Manhattan plus row and column conflicts", true, true, false}},
    HeuristicEntry<Reversal>{{"reversal", "Manhattan plus adjacent tile-reversal penalty", true, true, false}},
    HeuristicEntry<PatternDatabase>{{"pdb", "additive pattern databases (--pdb-preset, --pdb-groups)", true,
                                     // Each table keeps the minimum over blank positions, so one move can
                                     // drop a group's value by more than one.
                                     false, true}});

// Not searches of their own but portfolios of them, run by Solve.
const AlgorithmInfo kPortfolioAlgorithms[] = {
    {"auto", "the default: optimal where that is quick (up to 16 cells), anytime otherwise", false,
     Optimality::kWhenProved, false, false, kMaxBoardSide, true},
    {"anytime", "an answer at once, better ones while time allows, with a proven lower bound (--max-gap)", false,
     Optimality::kWhenProved, false, false, kMaxBoardSide, true},
};

// Heuristics that need options or can fail to build provide Create(), and
// those with options of their own check them with ValidateOptions().
template <class H>
absl::StatusOr<H> MakeHeuristic(const Puzzle& puzzle, const HeuristicOptions& options) {
  if constexpr (requires { H::Create(puzzle, options); }) {
    return H::Create(puzzle, options);
  } else {
    return H(puzzle);
  }
}

template <class H>
absl::Status ValidateHeuristic(const Board& goal, const HeuristicOptions& options) {
  if constexpr (requires { H::ValidateOptions(goal, options); }) {
    return H::ValidateOptions(goal, options);
  } else {
    return absl::OkStatus();
  }
}

template <class Table>
std::vector<decltype(std::get<0>(std::declval<Table>()).info)> InfoList(const Table& table) {
  return std::apply([](const auto&... e) { return std::vector{e.info...}; }, table);
}

const std::vector<AlgorithmInfo>& AlgorithmList() {
  static const auto* list = [] {
    auto* all = new std::vector<AlgorithmInfo>(std::begin(kPortfolioAlgorithms), std::end(kPortfolioAlgorithms));
    for (const AlgorithmInfo& a : InfoList(kAlgorithmTable)) all->push_back(a);
    return all;
  }();
  return *list;
}

const std::vector<HeuristicInfo>& HeuristicList() {
  static const auto* list = new std::vector<HeuristicInfo>(InfoList(kHeuristicTable));
  return *list;
}

// Calls f(entry) for the table entry called `name`; false if none is.
template <class Table, class F>
bool VisitByName(const Table& table, absl::string_view name, F&& f) {
  return std::apply([&](const auto&... entry) { return ((entry.info.name == name && (f(entry), true)) || ...); },
                    table);
}

template <class Info>
absl::Status CheckName(absl::string_view kind, absl::string_view name, const std::vector<Info>& known) {
  for (const Info& info : known) {
    if (info.name == name) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown ", kind, " '", name, "' (known: ",
      absl::StrJoin(known, ", ", [](std::string* out, const Info& i) { absl::StrAppend(out, i.name); }), ")"));
}

template <class Info, class Keep>
std::string NameList(const std::vector<Info>& list, Keep keep) {
  std::vector<absl::string_view> names;
  for (const Info& info : list) {
    if (keep(info)) names.push_back(info.name);
  }
  return absl::StrJoin(names, ", ");
}

constexpr auto kAll = [](const auto&) { return true; };

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

absl::Status CheckAlgorithmName(absl::string_view name) { return CheckName("algorithm", name, AlgorithmList()); }

absl::Status CheckHeuristicName(absl::string_view name) { return CheckName("heuristic", name, HeuristicList()); }

std::string AlgorithmNames() { return NameList(AlgorithmList(), kAll); }
std::string HeuristicNames() { return NameList(HeuristicList(), kAll); }

absl::Status CheckSplits(absl::string_view algorithm_name, absl::string_view what) {
  if (absl::Status s = CheckAlgorithmName(algorithm_name); !s.ok()) return s;
  if (FindAlgorithm(algorithm_name)->splits) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, " applies only to ", NameList(AlgorithmList(), [](const AlgorithmInfo& a) { return a.splits; }),
      ", not to ", algorithm_name));
}

absl::Status ValidateEntryOptions(absl::string_view algorithm_name, absl::string_view heuristic_name, bool weight_given,
                                  double weight, const Board& goal, const HeuristicOptions& options) {
  if (absl::Status s = CheckAlgorithmName(algorithm_name); !s.ok()) return s;
  const AlgorithmInfo& algorithm = *FindAlgorithm(algorithm_name);
  if (weight_given) {
    if (!algorithm.takes_weight) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a weight applies only to ", NameList(AlgorithmList(), [](const AlgorithmInfo& a) { return a.takes_weight; }),
          ", not to ", algorithm_name));
    }
    if (!(weight >= 0 && weight <= kMaxWeight)) {
      return absl::InvalidArgumentError(absl::StrFormat("weight %g is out of range (0 to %g)", weight, kMaxWeight));
    }
  }
  const bool pattern_groups_given = !options.pdb_preset.empty() || !options.pdb_groups.empty();
  if (!algorithm.uses_heuristic) {
    // auto and anytime use the tables named once they are built and loaded
    // (engine/anytime/table_watch.h), so the names must make sense.
    if (pattern_groups_given && algorithm.portfolio) return ValidateHeuristic<PatternDatabase>(goal, options);
    if (pattern_groups_given) {
      return absl::InvalidArgumentError(
          absl::StrCat("a pattern preset or groups apply only to a heuristic, and ", algorithm_name, " uses none"));
    }
    return absl::OkStatus();
  }
  if (absl::Status s = CheckHeuristicName(heuristic_name); !s.ok()) return s;
  absl::Status status;
  VisitByName(kHeuristicTable, heuristic_name, [&](const auto& h) {
    using H = typename std::decay_t<decltype(h)>::Type;
    if (pattern_groups_given && !h.info.takes_pattern_groups) {
      status = absl::InvalidArgumentError(
          absl::StrCat("a pattern preset or groups apply only to ",
                       NameList(HeuristicList(), [](const HeuristicInfo& i) { return i.takes_pattern_groups; }),
                       ", not to ", heuristic_name));
    } else {
      status = ValidateHeuristic<H>(goal, options);
    }
  });
  return status;
}

namespace {

// The outcome of a solve stopped before its search began (while a
// heuristic's tables were built), or the error if it was not a stop.
absl::StatusOr<SearchOutcome> StoppedBeforeSearch(const absl::Status& why, absl::Time begin) {
  SearchOutcome out;
  switch (why.code()) {
    case absl::StatusCode::kCancelled:
      out.status = SearchStatus::kCancelled;
      break;
    case absl::StatusCode::kDeadlineExceeded:
      out.status = SearchStatus::kTimeLimit;
      break;
    case absl::StatusCode::kResourceExhausted:
      out.status = SearchStatus::kMemoryLimit;
      break;
    default:
      return why;
  }
  out.stats.elapsed = absl::Now() - begin;
  return out;
}

}  // namespace

absl::StatusOr<SearchOutcome> RunSearch(const SearchSpec& spec, const Puzzle& puzzle, const Tiles& start) {
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
    SearchOutcome outcome = A::Run(problem);
    // As the time limit does, the time reported covers the heuristic's set-up
    // too: counted from the search's start alone, a search stopped by the
    // limit reported less than the limit (149.99 ms of 150 under AddressSanitizer).
    outcome.stats.elapsed = absl::Now() - begin;
    out = std::move(outcome);
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
  if (!known_algorithm) {
    if (absl::Status unknown = CheckAlgorithmName(spec.algorithm); !unknown.ok()) return unknown;
    return absl::InvalidArgumentError(absl::StrCat(spec.algorithm, " runs several searches: call Solve"));
  }
  return *std::move(out);
}

}  // namespace npuzzle
