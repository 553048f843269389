// Engine benchmarks (issue 2):
//   A* + Manhattan on 1,000 random solvable 3x3 boards: median and mean
//   time per solve.
//   IDA* with Manhattan and with linear conflict on Korf's first ten
//   15-puzzle instances: nodes generated, nodes per second, seconds each.
//   The anytime solver's beam search at a fixed width on random 6x6 and
//   7x7 boards: children a second and mean answer length.
// Run: build/bench/engine_bench [--benchmark_filter=...]
#include <atomic>
#include <cmath>
#include <optional>
#include <random>

#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "bench/reference_ida.h"
#include "benchmark/benchmark.h"
#include "engine/anytime/beam.h"
#include "engine/anytime/grid.h"
#include "engine/anytime/staged.h"
#include "engine/goals.h"
#include "engine/instances.h"
#include "engine/move_pruning.h"
#include "engine/solver.h"

namespace npuzzle::bench {
namespace {

SolveResult MustSolve(const SolveRequest& request) {
  absl::StatusOr<SolveResult> r = Solve(request);
  if (!r.ok() || r->status != SearchStatus::kSolved) std::abort();
  return *std::move(r);
}

void BM_AStarManhattan3x3(benchmark::State& state) {
  const Board goal = *GoalPreset("standard", 3, 3);
  std::mt19937_64 rng(1);
  std::vector<Board> boards;
  for (int i = 0; i < 1000; ++i) boards.push_back(RandomSolvableBoard(goal, rng));
  std::vector<double> micros;
  double expanded = 0;
  for (auto _ : state) {
    for (const Board& board : boards) {
      const absl::Time t0 = absl::Now();
      const SolveResult r = MustSolve({board, goal, "astar", "manhattan"});
      micros.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
      expanded += r.stats.expanded;
    }
  }
  state.counters["median_us"] = Median(micros);
  state.counters["mean_us"] = Mean(micros);
  state.counters["mean_expanded"] = expanded / micros.size();
  state.SetItemsProcessed(state.iterations() * boards.size());
}
BENCHMARK(BM_AStarManhattan3x3)->Unit(benchmark::kMillisecond);

// The fixed cost of one Solve call: validation, tables, a one-node search.
void BM_SolveOverhead(benchmark::State& state) {
  const Board goal = *GoalPreset("standard", 3, 3);
  for (auto _ : state) benchmark::DoNotOptimize(MustSolve({goal, goal, "astar", "manhattan"}));
}
BENCHMARK(BM_SolveOverhead);

// One beam of width 16,384 on each of three seeded random side x side
// boards (args: side, threads), bounded as the anytime solver's first beam
// is, by the answer by lines: the solver's improver, whose answers shorten
// with the width it can afford in the time limit, so its speed is its
// quality.
void BM_BeamSearch(benchmark::State& state) {
  const int side = static_cast<int>(state.range(0));
  const Board goal = *GoalPreset("standard", side, side);
  const Grid grid(side, side);
  const GridState target = grid.StateOf(goal);
  const GridHeuristic heuristic(grid, target);
  std::mt19937_64 rng(1);
  std::vector<std::pair<GridState, int>> starts;  // and the answer by lines' length
  for (int i = 0; i < 3; ++i) {
    const GridState start = grid.StateOf(RandomSolvableBoard(goal, rng));
    const std::optional<std::vector<Dir>> by_lines = SolveByLines(grid, start, target, [] { return false; });
    if (!by_lines) std::abort();
    starts.emplace_back(start, static_cast<int>(by_lines->size()));
  }
  std::atomic<uint64_t> generated{0};
  BeamOptions options;
  options.width = 16384;
  options.threads = static_cast<int>(state.range(1));
  options.generated = &generated;
  double length = 0;
  for (auto _ : state) {
    for (const auto& [start, bound] : starts) {
      options.bound = bound;
      const std::optional<std::vector<Dir>> moves = BeamSearch(grid, heuristic, start, options);
      if (!moves) std::abort();
      length += static_cast<double>(moves->size());
    }
  }
  state.counters["children_per_s"] = benchmark::Counter(static_cast<double>(generated), benchmark::Counter::kIsRate);
  state.counters["mean_length"] = length / static_cast<double>(state.iterations() * starts.size());
}
BENCHMARK(BM_BeamSearch)
    ->Args({6, 1})
    ->Args({7, 1})
    ->Args({7, 2})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

void BM_IdaStarKorf(benchmark::State& state, const char* heuristic) {
  const KorfInstance k = LoadKorfInstances("korf100.txt", 4)[state.range(0)];
  const Board goal = *GoalPreset("blank-first", 4, 4);
  SolveResult r;
  for (auto _ : state) r = MustSolve({k.start, goal, "idastar", heuristic});
  if (static_cast<int>(r.moves.size()) != k.optimal_length) state.SkipWithError("wrong length");
  state.counters["instance"] = k.id;
  state.counters["length"] = r.moves.size();
  state.counters["generated"] = r.stats.generated;
  state.counters["Mnodes_per_s"] = r.stats.nodes_per_second / 1e6;
}
BENCHMARK_CAPTURE(BM_IdaStarKorf, manhattan, "manhattan")->DenseRange(0, 9)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_IdaStarKorf, linear_conflict, "linear-conflict")
    ->DenseRange(0, 9)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

// The engine's IDA* node rate against the minimal C reference, both single
// threaded on the same instance in the same run; `ratio` above 1 means the
// engine generates nodes faster. Like the reference, the engine prunes only
// the move that undoes the last one here, so both generate the same nodes.
// `time_ratio` is the reference's time over the engine's with its default
// move pruning (fewer nodes for the same answer): above 1, the engine
// solves faster. Each side runs twice, keeping its best.
void BM_IdaStarVsReference(benchmark::State& state) {
  const KorfInstance k = LoadKorfInstances("korf100.txt", 4)[state.range(0)];
  const Board goal = *GoalPreset("blank-first", 4, 4);
  int tiles[16];
  for (int c = 0; c < 16; ++c) tiles[c] = k.start.at(c);
  double engine_rate = 0, reference_rate = 0;
  double reference_seconds = INFINITY, pruned_seconds = INFINITY;
  for (auto _ : state) {
    for (int round = 0; round < 2; ++round) {
      absl::Time t0 = absl::Now();
      const ReferenceResult ref = ReferenceIdaStar(tiles);
      const double ref_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
      if (ref.length != k.optimal_length) state.SkipWithError("reference: wrong length");
      reference_rate = std::max(reference_rate, ref.generated / ref_seconds);
      reference_seconds = std::min(reference_seconds, ref_seconds);

      SolveRequest request{k.start, goal, "idastar", "manhattan"};
      request.options.threads = 1;
      request.options.pruning_length = 2;
      t0 = absl::Now();
      const SolveResult r = MustSolve(request);
      const double seconds = absl::ToDoubleSeconds(absl::Now() - t0);
      if (static_cast<int>(r.moves.size()) != k.optimal_length) state.SkipWithError("engine: wrong length");
      if (r.stats.generated != ref.generated) state.SkipWithError("engine and reference generated different nodes");
      engine_rate = std::max(engine_rate, r.stats.generated / seconds);
      state.counters["engine_generated"] = r.stats.generated;
      state.counters["reference_generated"] = ref.generated;

      request.options.pruning_length = SearchOptions().pruning_length;
      t0 = absl::Now();
      const SolveResult pruned = MustSolve(request);
      pruned_seconds = std::min(pruned_seconds, absl::ToDoubleSeconds(absl::Now() - t0));
      if (pruned.moves.size() != r.moves.size()) state.SkipWithError("move pruning: wrong length");
      state.counters["pruned_generated"] = pruned.stats.generated;
    }
  }
  state.counters["instance"] = k.id;
  state.counters["engine_Mnodes_per_s"] = engine_rate / 1e6;
  state.counters["reference_Mnodes_per_s"] = reference_rate / 1e6;
  state.counters["ratio"] = engine_rate / reference_rate;
  state.counters["time_ratio"] = reference_seconds / pruned_seconds;
}
// Korf's instances 1 and 3.
BENCHMARK(BM_IdaStarVsReference)->Arg(0)->Arg(2)->Iterations(1)->Unit(benchmark::kSecond);

// Move pruning by sequence length on Korf's instances 1 to 5: the machine's
// size and build time, and IDA*'s nodes and time with it (one thread).
void BM_IdaStarPruningLength(benchmark::State& state) {
  const int length = static_cast<int>(state.range(0));
  const Board goal = *GoalPreset("blank-first", 4, 4);
  // The first request builds it; the searches below find it built.
  const absl::Time built = absl::Now();
  const MovePruning& machine = *MovePruning::For(4, 4, length);
  state.counters["build_ms"] = absl::ToDoubleMilliseconds(absl::Now() - built);
  state.counters["machine_states"] = machine.states();
  double generated = 0, seconds = 0;
  for (auto _ : state) {
    const std::vector<KorfInstance> instances = LoadKorfInstances("korf100.txt", 4);
    for (int i = 0; i < 5; ++i) {
      const KorfInstance& k = instances[i];
      SolveRequest request{k.start, goal, "idastar", "manhattan"};
      request.options.threads = 1;
      request.options.pruning_length = length;
      const absl::Time t0 = absl::Now();
      const SolveResult r = MustSolve(request);
      seconds += absl::ToDoubleSeconds(absl::Now() - t0);
      if (static_cast<int>(r.moves.size()) != k.optimal_length) state.SkipWithError("wrong length");
      generated += r.stats.generated;
    }
  }
  state.counters["generated"] = generated;
  state.counters["search_s"] = seconds;
}
BENCHMARK(BM_IdaStarPruningLength)->DenseRange(2, MovePruning::kMaxLength, 2)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace npuzzle::bench

BENCHMARK_MAIN();
