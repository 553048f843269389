// How good and how quick the anytime solver's answers are: for each shape,
// seeded random boards (standard goal) solved with --algorithm anytime
// under each time limit, and Korf and Taylor's first 5x5 instances against
// their optimal lengths. Prints, per shape and limit, the first answer's
// time, the mean answer length over the start's Manhattan + linear-conflict
// bound (the issue's yardstick), and the mean proven lower bound over it.
//
//   build/bin/anytime_bench --shapes 6x6,7x7,8x8 --boards 10 --seconds 1,10
//   build/bin/anytime_bench --korf 3 --seconds 10
//   build/bin/anytime_bench --shapes '' --korf 3 --seconds 10 --zero_aware  # with 6-6-6-6 tables built
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "engine/goals.h"
#include "engine/instances.h"
#include "engine/solver.h"
#include "tests/util/korf_instances.h"

ABSL_FLAG(std::string, shapes, "6x6,7x7,8x8", "board shapes, rows x cols");
ABSL_FLAG(int, boards, 10, "random boards a shape");
ABSL_FLAG(std::string, seconds, "1,10", "time limits to run each board under");
ABSL_FLAG(int, threads, 2, "threads a solve");
ABSL_FLAG(int, korf, 0, "also run Korf and Taylor's first this many 5x5 instances");
ABSL_FLAG(uint64_t, seed, 1, "the boards' seed");
ABSL_FLAG(std::string, pdb_dir, "",
          "pattern table cache; tables built there for a board's goal are used (empty: the default cache)");
ABSL_FLAG(std::string, pdb_preset, "", "which tables (empty: the board's default)");
ABSL_FLAG(bool, zero_aware, false, "zero-aware tables");

namespace npuzzle {
namespace {

struct Run {
  double first_ms = 0;
  int length = 0;
  int lower_bound = 0;
  int start_bound = 0;
  std::string heuristic;  // what ranked the beams: linear-conflict, or pdb (tables built)
};

Run SolveOnce(const Board& start, const Board& goal, double seconds) {
  SolveRequest r;
  r.start = start;
  r.goal = goal;
  r.algorithm = "anytime";
  r.options.threads = absl::GetFlag(FLAGS_threads);
  r.options.limits.max_time = absl::Seconds(seconds);
  r.heuristic_options.pdb_dir = absl::GetFlag(FLAGS_pdb_dir);
  r.heuristic_options.pdb_preset = absl::GetFlag(FLAGS_pdb_preset);
  r.heuristic_options.pdb_zero_aware = absl::GetFlag(FLAGS_zero_aware);
  Run run;
  const absl::Time begin = absl::Now();
  r.on_improvement = [&](const BestSoFar& best) {
    if (run.first_ms == 0 && !best.moves.empty()) run.first_ms = absl::ToDoubleMilliseconds(absl::Now() - begin);
  };
  absl::StatusOr<SolveResult> result = Solve(r);
  if (!result.ok() || result->status != SearchStatus::kSolved) {
    std::fprintf(stderr, "no answer for %s\n", start.ToString().c_str());
    return run;
  }
  run.length = static_cast<int>(result->moves.size());
  run.lower_bound = result->lower_bound;
  run.start_bound = result->stats.start_h;
  run.heuristic = result->heuristic;
  return run;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void Shapes(const std::vector<double>& limits) {
  std::printf("%-6s %6s %14s %14s %14s %12s\n", "shape", "limit", "first (median)", "first (max)", "length/MD+LC",
              "bound/MD+LC");
  for (absl::string_view shape : absl::StrSplit(absl::GetFlag(FLAGS_shapes), ',')) {
    std::vector<std::string> rc = absl::StrSplit(shape, 'x');
    int rows = 0, cols = 0;
    if (rc.size() != 2 || !absl::SimpleAtoi(rc[0], &rows) || !absl::SimpleAtoi(rc[1], &cols)) {
      std::fprintf(stderr, "bad shape %s\n", std::string(shape).c_str());
      continue;
    }
    const Board goal = *GoalPreset("standard", rows, cols);
    for (double seconds : limits) {
      std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
      std::vector<double> first;
      double length_ratio = 0, bound_ratio = 0;
      const int boards = absl::GetFlag(FLAGS_boards);
      for (int b = 0; b < boards; ++b) {
        const Run run = SolveOnce(RandomSolvableBoard(goal, rng), goal, seconds);
        first.push_back(run.first_ms);
        length_ratio += static_cast<double>(run.length) / std::max(1, run.start_bound) / boards;
        bound_ratio += static_cast<double>(run.lower_bound) / std::max(1, run.start_bound) / boards;
      }
      std::printf("%-6s %5gs %11.1f ms %11.1f ms %14.3f %12.3f\n", std::string(shape).c_str(), seconds, Median(first),
                  *std::max_element(first.begin(), first.end()), length_ratio, bound_ratio);
      std::fflush(stdout);
    }
  }
}

void Korf(const std::vector<double>& limits, int count) {
  const std::vector<KorfInstance> instances = LoadKorfInstances("korf-taylor-24.txt", 5);
  const Board goal = *GoalPreset("blank-first", 5, 5);
  std::printf("\n%-9s %6s %8s %8s %10s %12s  %s\n", "5x5 #", "limit", "optimal", "length", "length/opt", "lower bound",
              "heuristic");
  for (double seconds : limits) {
    for (int i = 0; i < std::min<int>(count, instances.size()); ++i) {
      const Run run = SolveOnce(instances[i].start, goal, seconds);
      std::printf("%-9d %5gs %8d %8d %10.3f %12d  %s\n", instances[i].id, seconds, instances[i].optimal_length,
                  run.length, static_cast<double>(run.length) / instances[i].optimal_length, run.lower_bound,
                  run.heuristic.c_str());
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace npuzzle

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::vector<double> limits;
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_seconds), ',')) {
    double v = 0;
    if (absl::SimpleAtod(s, &v) && v > 0) limits.push_back(v);
  }
  if (!absl::GetFlag(FLAGS_shapes).empty()) npuzzle::Shapes(limits);
  if (absl::GetFlag(FLAGS_korf) > 0) npuzzle::Korf(limits, absl::GetFlag(FLAGS_korf));
}
