// Optimal solving of Korf's instances with pattern databases (issue 3).
//
//   korf_pdb --preset 7-8 --threads 1            all 100 15-puzzle instances
//   korf_pdb --preset 6-6-3 --threads 0          ... on every core
//   korf_pdb --file korf-taylor-24.txt --preset 6-6-6-6 --time_cap_s 900
//   korf_pdb ... --pruning_length 2               without the move-pruning machine
//   korf_pdb ... --zero_aware                     tables that count the blank's region
//   korf_pdb ... --iterations --time_cap_s 600    each iteration's nodes, and a
//                                                 projection for instances cut off
//   korf_pdb --file korf-taylor-24.txt --preset 6-6-6-6 --zero_aware --checkpoint ten.log
//                                                 all ten, resuming after a restart
//
// Prints one line per instance (length, optimal length, nodes, seconds) and
// totals; tables are loaded from (or built into) --data_dir/pdb, and the
// time that took, and the pruning machine's build, are reported separately
// from search time.
#include <algorithm>
#include <iostream>
#include <optional>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "bench/checkpoint_log.h"
#include "engine/goals.h"
#include "engine/heuristics/pattern_database.h"
#include "engine/move_pruning.h"
#include "engine/solver.h"

ABSL_FLAG(std::string, file, "korf100.txt", "instance file under tests/data");
ABSL_FLAG(std::string, preset, "7-8", "pattern database preset");
ABSL_FLAG(int, threads, 1, "search threads (0: every core)");
ABSL_FLAG(int, first, 1, "first instance id");
ABSL_FLAG(int, last, 100, "last instance id");
ABSL_FLAG(double, time_cap_s, 0, "give up on an instance after this many seconds (0: never)");
ABSL_FLAG(bool, mirror, true, "use the mirror (transpose) lookups");
ABSL_FLAG(bool, zero_aware, false, "zero-aware tables: count the blank's region (engine/pdb/blank_extras.h)");
ABSL_FLAG(int, pruning_length, npuzzle::SearchOptions().pruning_length,
          "move sequences compared by the pruning machine (2: only undoing moves are skipped)");
ABSL_FLAG(bool, iterations, false,
          "print each finished IDA* iteration's nodes; for an instance stopped by --time_cap_s, project the nodes "
          "and time to its optimal length");
ABSL_FLAG(std::string, checkpoint, "",
          "file recording each finished iteration, subtree of an iteration and instance; a run given the same "
          "file skips the solved instances and resumes the unfinished one at its next bound, without the subtrees "
          "done (bench/checkpoint_log.h)");
ABSL_FLAG(std::string, data_dir, "", "table cache (DIR/pdb); default $NPUZZLE_DATA_DIR or ~/.cache/npuzzle");

namespace npuzzle::bench {
namespace {

// One finished IDA* iteration: its bound and the nodes it generated.
struct Iteration {
  int bound;
  uint64_t generated;
};

// Prints what finishing would take, assuming each remaining iteration
// grows by the ratio of the last two finished ones, and counting the last
// iteration in full (it stops at the solution, so that is an upper end).
void PrintProjection(const std::vector<Iteration>& done, int optimal_length, double nodes_per_second) {
  if (done.size() < 2 || done.back().generated == 0) {
    std::cout << "#   too few iterations finished to project\n";
    return;
  }
  const double ratio = static_cast<double>(done.back().generated) / done[done.size() - 2].generated;
  const int step = done.back().bound - done[done.size() - 2].bound;
  double total = 0;
  for (const Iteration& it : done) total += it.generated;
  double next = done.back().generated;
  for (int bound = done.back().bound + step; bound <= optimal_length; bound += step) total += next *= ratio;
  std::cout << absl::StrFormat(
      "#   projection: x%.2f per iteration, %.3g nodes through bound %d, %.0f s (%.1f h) at %.1f M nodes/s\n", ratio,
      total, optimal_length, total / nodes_per_second, total / nodes_per_second / 3600, nodes_per_second / 1e6);
}

int Main() {
  const std::string file = absl::GetFlag(FLAGS_file);
  const int side = file.find("24") != std::string::npos ? 5 : 4;
  const Board goal = *GoalPreset("blank-first", side, side);
  HeuristicOptions heuristic;
  heuristic.pdb_preset = absl::GetFlag(FLAGS_preset);
  heuristic.pdb_mirror = absl::GetFlag(FLAGS_mirror);
  heuristic.pdb_zero_aware = absl::GetFlag(FLAGS_zero_aware);
  if (!absl::GetFlag(FLAGS_data_dir).empty()) heuristic.pdb_dir = absl::GetFlag(FLAGS_data_dir) + "/pdb";
  heuristic.on_message = [](absl::string_view m) {
    if (m.find("distance") == absl::string_view::npos) std::cout << "# " << m << "\n";
  };

  std::optional<CheckpointLog> log;
  if (const std::string path = absl::GetFlag(FLAGS_checkpoint); !path.empty()) {
    // What the node counts depend on (threads only change them a little),
    // checked before any table is built.
    const absl::StatusOr<PatternPartitions> partitions = ResolvePatternPartitions(goal, heuristic.pdb_preset, "");
    if (!partitions.ok()) {
      std::cerr << partitions.status() << "\n";
      return 1;
    }
    const std::string configuration = absl::StrFormat(
        "file=%s tables=%s zero_aware=%d mirror=%d pruning_length=%d", file, FormatPatternPartitions(*partitions),
        heuristic.pdb_zero_aware, heuristic.pdb_mirror, absl::GetFlag(FLAGS_pruning_length));
    absl::StatusOr<CheckpointLog> opened = CheckpointLog::Open(path, configuration);
    if (!opened.ok()) {
      std::cerr << opened.status().message() << "\n";
      return 1;
    }
    log = *std::move(opened);
  }
  // Load (or build) the tables once, as a worker process would.
  const absl::Time load_start = absl::Now();
  absl::StatusOr<PatternDatabase> db = PatternDatabase::Create(Puzzle(goal), heuristic);
  if (!db.ok()) {
    std::cerr << db.status() << "\n";
    return 1;
  }
  std::cout << absl::StrFormat("# tables %s ready in %.2f s\n", FormatPatternPartitions(db->partitions()),
                               absl::ToDoubleSeconds(absl::Now() - load_start));
  // The pruning machine too: a worker builds it once, and otherwise the
  // first instance's search would pay for it (about 1.5 s of a core on 5x5).
  if (absl::GetFlag(FLAGS_pruning_length) > 2) {
    const absl::Time build_start = absl::Now();
    const MovePruning* machine = MovePruning::For(side, side, absl::GetFlag(FLAGS_pruning_length));
    std::cout << absl::StrFormat("# pruning machine of %d moves (%d states) ready in %.2f s\n", machine->length(),
                                 machine->states(), absl::ToDoubleSeconds(absl::Now() - build_start));
  }

  int threads = absl::GetFlag(FLAGS_threads);
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<double> seconds;
  uint64_t nodes = 0;
  int optimal = 0, attempted = 0;
  const auto print_row = [](int id, int length, int optimal_length, absl::string_view status, uint64_t generated,
                            double s, absl::string_view note) {
    std::cout << absl::StrFormat("%3d %3d %3d %-10s %14d %9.3f%s\n", id, length, optimal_length, status, generated, s,
                                 note)
              << std::flush;
  };
  std::cout << "# id length optimal_length status generated seconds\n";
  for (const KorfInstance& k : LoadKorfInstances(file, side)) {
    if (k.id < absl::GetFlag(FLAGS_first) || k.id > absl::GetFlag(FLAGS_last)) continue;
    const InstanceProgress before = log ? log->Progress(k.id) : InstanceProgress{};
    if (before.solved) {
      ++attempted;
      optimal += before.length == k.optimal_length;
      seconds.push_back(before.seconds);
      nodes += before.generated;
      print_row(k.id, before.length, k.optimal_length, "solved", before.generated, before.seconds,
                "  (from the checkpoint)");
      continue;
    }
    SolveRequest request{k.start, goal, "idastar", "pdb"};
    request.options.resume_bound = before.resume_bound;
    request.heuristic_options = heuristic;
    request.heuristic_options.on_message = nullptr;
    request.options.threads = threads;
    request.options.pruning_length = absl::GetFlag(FLAGS_pruning_length);
    if (const double cap = absl::GetFlag(FLAGS_time_cap_s); cap > 0) {
      request.options.limits.max_time = absl::Seconds(cap);
    }
    request.options.resume_subtrees = before.subtrees;
    std::vector<Iteration> done;
    const absl::Time began = absl::Now();
    uint64_t generated = 0;
    absl::Status logged;
    // The iteration whose subtrees are logged: the one after the last
    // logged (none before the first is, which is small).
    int under_way = before.resume_bound;
    if (log) {
      // Called one at a time, and never beside on_checkpoint (between
      // passes), so `logged` needs no lock.
      request.options.on_subtree_checkpoint = [&](const SubtreeCheckpoint& s) {
        if (s.bound != under_way || !logged.ok()) return;
        logged = log->RecordSubtree(k.id, s, before.seconds + absl::ToDoubleSeconds(absl::Now() - began));
      };
    }
    request.options.on_checkpoint = [&](const IterationCheckpoint& c) {
      done.push_back({c.bound, c.generated - generated});
      generated = c.generated;
      under_way = c.next_bound;
      const double elapsed = absl::ToDoubleSeconds(absl::Now() - began);
      if (log && logged.ok()) {
        logged = log->RecordIteration(k.id, c.next_bound, before.generated + c.generated, before.seconds + elapsed);
      }
      if (absl::GetFlag(FLAGS_iterations)) {
        std::cout << absl::StrFormat("#   %3d: bound %d done, %d nodes, %.1f s in all\n", k.id, c.bound,
                                     done.back().generated, elapsed)
                  << std::flush;
      }
    };
    absl::StatusOr<SolveResult> r = Solve(request);
    if (!r.ok() || !logged.ok()) {
      std::cerr << (r.ok() ? logged : r.status()) << "\n";
      return 1;
    }
    ++attempted;
    const double s = before.seconds + absl::ToDoubleSeconds(r->stats.elapsed);
    const uint64_t instance_nodes = before.generated + r->stats.generated;
    const bool right = r->status == SearchStatus::kSolved && static_cast<int>(r->moves.size()) == k.optimal_length;
    optimal += right;
    seconds.push_back(s);
    nodes += instance_nodes;
    if (log && r->status == SearchStatus::kSolved) {
      if (absl::Status st = log->RecordSolved(k.id, static_cast<int>(r->moves.size()), instance_nodes, s); !st.ok()) {
        std::cerr << st << "\n";
        return 1;
      }
    }
    print_row(k.id, static_cast<int>(r->moves.size()), k.optimal_length, StatusName(r->status), instance_nodes, s,
              before.resume_bound == 0  ? ""
              : before.subtrees.empty() ? absl::StrFormat("  (resumed at bound %d)", before.resume_bound)
                                        : absl::StrFormat("  (resumed at bound %d, %d of its subtrees done)",
                                                          before.resume_bound, before.subtrees.size()));
    if (absl::GetFlag(FLAGS_iterations) && r->status == SearchStatus::kTimeLimit) {
      PrintProjection(done, k.optimal_length, r->stats.nodes_per_second);
    }
  }
  double total = 0;
  for (double s : seconds) total += s;
  std::cout << absl::StrFormat(
      "# %s threads=%d: %d/%d optimal, search %.2f s total, median %.4f s, mean %.4f s, %d nodes generated, "
      "%.1f M nodes/s\n",
      absl::GetFlag(FLAGS_preset), threads, optimal, attempted, total, Median(seconds), Mean(seconds), nodes,
      total > 0 ? nodes / total / 1e6 : 0.0);
  return optimal == attempted ? 0 : 1;
}

}  // namespace
}  // namespace npuzzle::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return npuzzle::bench::Main();
}
