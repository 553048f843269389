// A soak for the class of bug where a graph search and a tree search
// disagree on large boards (the 6x6 packing bug): random shapes above 16
// cells, random goals, random-walk scrambles, solved by A* and IDA* with
// Manhattan and linear conflict. Every finished answer replays (Solve checks
// that) and all of them must have one length, no longer than the walk.
//
//   agreement_soak                              300 instances, a few minutes
//   agreement_soak --instances 5000 --seed 9    longer, by hand
//   agreement_soak --instances 40 --max_walk 44 the CI smoke run
//
// Exits 1 on any disagreement, printing the instance so it can be replayed
// with `npuzzle solve`.
#include <algorithm>
#include <iostream>
#include <numeric>
#include <random>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "engine/instances.h"
#include "engine/limits.h"
#include "engine/solver.h"

ABSL_FLAG(int, instances, 300, "random instances to solve");
ABSL_FLAG(uint64_t, seed, 1, "seed for shapes, goals and walks");
ABSL_FLAG(int, min_cells, 17, "smallest board (cells) to draw");
ABSL_FLAG(int, min_walk, 10, "shortest scramble");
ABSL_FLAG(int, max_walk, 60, "longest scramble");
ABSL_FLAG(uint64_t, max_nodes, 2000000, "node cap per solve; a solve hitting it is counted as unfinished");
ABSL_FLAG(bool, verbose, false, "one line per instance");

namespace npuzzle::bench {
namespace {

Board RandomGoal(int rows, int cols, std::mt19937_64& rng) {
  std::vector<int> tiles(rows * cols);
  std::iota(tiles.begin(), tiles.end(), 0);
  std::shuffle(tiles.begin(), tiles.end(), rng);
  return *Board::Create(rows, cols, std::move(tiles));
}

int Main() {
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  std::vector<std::pair<int, int>> shapes;
  for (int r = kMinSide; r <= kMaxSide; ++r) {
    for (int c = kMinSide; c <= kMaxSide; ++c) {
      if (r * c >= absl::GetFlag(FLAGS_min_cells)) shapes.push_back({r, c});
    }
  }
  const int min_walk = absl::GetFlag(FLAGS_min_walk);
  const int max_walk = std::max(min_walk, absl::GetFlag(FLAGS_max_walk));
  const absl::Time begin = absl::Now();
  int compared = 0, unfinished = 0, disagreements = 0;
  for (int i = 0; i < absl::GetFlag(FLAGS_instances); ++i) {
    const auto [rows, cols] = shapes[rng() % shapes.size()];
    const Board goal = RandomGoal(rows, cols, rng);
    const int walk = min_walk + static_cast<int>(rng() % (max_walk - min_walk + 1));
    const Board start = RandomWalk(goal, walk, rng);
    std::vector<std::pair<std::string, int>> lengths;
    for (const char* algorithm : {"astar", "idastar"}) {
      for (const char* heuristic : {"manhattan", "linear-conflict"}) {
        SolveRequest request{start, goal, algorithm, heuristic};
        request.options.limits.max_expanded = absl::GetFlag(FLAGS_max_nodes);
        request.options.limits.max_memory_bytes = DefaultLocalMemoryMb() << 20;
        absl::StatusOr<SolveResult> r = Solve(request);
        if (!r.ok()) {
          std::cerr << "instance " << i << ": " << r.status() << "\n";
          return 1;
        }
        if (r->status != SearchStatus::kSolved) {
          ++unfinished;
          continue;
        }
        lengths.push_back({absl::StrFormat("%s/%s", algorithm, heuristic), static_cast<int>(r->moves.size())});
      }
    }
    bool agree = true;
    for (const auto& [name, length] : lengths) {
      agree = agree && length == lengths.front().second && length <= walk && length % 2 == walk % 2;
    }
    compared += lengths.size() >= 2;
    if (!agree) ++disagreements;
    if (!agree || absl::GetFlag(FLAGS_verbose)) {
      std::cout << absl::StrFormat("%s %dx%d walk %d: --board \"%s\" --goal \"%s\":", agree ? "ok" : "DISAGREE", rows,
                                   cols, walk, start.ToString(), goal.ToString());
      for (const auto& [name, length] : lengths) std::cout << " " << name << "=" << length;
      std::cout << "\n";
    }
  }
  std::cout << absl::StrFormat(
      "%d instances over %d shapes of >= %d cells, walks %d..%d: %d compared by at least two solvers, "
      "%d solves unfinished within %d nodes, %d disagreements, %.1f s\n",
      absl::GetFlag(FLAGS_instances), shapes.size(), absl::GetFlag(FLAGS_min_cells), min_walk, max_walk, compared,
      unfinished, absl::GetFlag(FLAGS_max_nodes), disagreements, absl::ToDoubleSeconds(absl::Now() - begin));
  return disagreements == 0 ? 0 : 1;
}

}  // namespace
}  // namespace npuzzle::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return npuzzle::bench::Main();
}
