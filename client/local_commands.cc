#include "client/local_commands.h"

#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "client/exit_codes.h"
#include "client/render.h"
#include "client/request.h"
#include "engine/heuristics/pattern_database.h"
#include "engine/instances.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/pdb/pdb_store.h"
#include "engine/puzzle.h"
#include "engine/solver.h"

namespace npuzzle {

int SolveHere(const Invocation& in) {
  absl::StatusOr<std::vector<Problem>> problems = ProblemsOf(in);
  if (!problems.ok()) {
    std::cerr << "npuzzle solve: " << problems.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<SolveRequest> base = RequestOf(in, RequestFor::kLocal);
  if (!base.ok()) {
    std::cerr << "npuzzle solve: " << base.status().message() << "\n";
    return kExitUsage;
  }
  // Every problem is checked before the first is solved, each against its
  // own goal (pattern presets are laid out around the goal's blank).
  for (const Problem& problem : *problems) {
    SolveRequest probe = *base;
    probe.start = problem.start;
    probe.goal = problem.goal;
    if (absl::Status s = ValidateSolveRequest(probe); !s.ok()) {
      std::cerr << "npuzzle solve" << (problem.line ? absl::StrCat(" (line ", problem.line, ")") : "") << ": "
                << s.message() << "\n";
      return kExitUsage;
    }
  }
  int exit_code = kExitAnswer;
  for (const Problem& problem : *problems) {
    SolveRequest request = *base;
    request.start = problem.start;
    request.goal = problem.goal;
    if (in.progress) {
      request.options.on_progress = [](const Progress& p) {
        std::cerr << "\r\033[K" << RenderProgress(p) << std::flush;
      };
    }
    absl::StatusOr<SolveResult> result = Solve(request);
    if (in.progress) std::cerr << "\r\033[K";
    if (!result.ok()) {
      std::cerr << "npuzzle solve" << (problem.line ? absl::StrCat(" (line ", problem.line, ")") : "") << ": "
                << result.status().message() << "\n";
      return kExitUsage;
    }
    if (result->status != SearchStatus::kSolved && result->status != SearchStatus::kUnsolvable) {
      exit_code = kExitNoAnswer;
    }
    if (in.json) {
      std::cout << ResultToJson(problem.start, problem.goal, *result).dump() << "\n";
    } else {
      std::cout << RenderHuman(problem.start, problem.goal, *result, in.show_steps)
                << (problems->size() > 1 ? "\n" : "");
    }
  }
  return exit_code;
}

int Generate(const Invocation& in) {
  const int rows = in.rows != 0 ? in.rows : 3;
  const int cols = in.cols != 0 ? in.cols : rows;
  absl::StatusOr<Board> goal = GoalOf(in, rows, cols);
  if (!goal.ok()) {
    std::cerr << "npuzzle gen: " << goal.status().message() << "\n";
    return kExitUsage;
  }
  const uint64_t seed = in.seed.value_or(std::random_device()());
  if (!in.seed) std::cerr << "npuzzle gen: seed " << seed << "\n";
  const int count = in.count;
  const int walk = in.walk;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    const Board board = walk > 0 ? RandomWalk(*goal, walk, rng) : RandomSolvableBoard(*goal, rng);
    std::cout << board.ToString() << "\n";
  }
  return kExitAnswer;
}

int BuildTables(const Invocation& in) {
  const int rows = in.rows != 0 ? in.rows : 4;
  const int cols = in.cols != 0 ? in.cols : rows;
  if (rows > kMaxSide || cols > kMaxSide) {
    std::cerr << "npuzzle pdb: pattern tables are for boards up to " << kMaxSide << "x" << kMaxSide << ", not " << rows
              << "x" << cols << "\n";
    return kExitUsage;
  }
  absl::StatusOr<Board> goal = GoalOf(in, rows, cols);
  absl::StatusOr<SolveRequest> request = RequestOf(in, RequestFor::kLocal);
  if (!goal.ok() || !request.ok()) {
    std::cerr << "npuzzle pdb: " << (goal.ok() ? request.status() : goal.status()).message() << "\n";
    return kExitUsage;
  }
  const Puzzle puzzle(*goal);
  const absl::Time start = absl::Now();
  absl::StatusOr<PatternDatabase> db = PatternDatabase::Create(puzzle, request->heuristic_options);
  if (!db.ok()) {
    std::cerr << "npuzzle pdb: " << db.status().message() << "\n";
    return kExitUsage;
  }
  std::set<std::vector<int>> groups;  // partitions that share a group share its table
  for (const PatternGroups& partition : db->partitions()) groups.insert(partition.begin(), partition.end());
  uint64_t entries = 0;
  for (const auto& group : groups) entries += PatternEntries(puzzle.cells(), static_cast<int>(group.size()));
  std::cout << "pattern databases for " << goal->Dimensions() << " goal " << goal->ToString() << "\n"
            << "groups " << FormatPatternPartitions(db->partitions())
            << (db->mirrored() ? " (with mirror lookups)" : "") << "\n"
            << entries << " entries (" << entries / (1 << 20) << " MiB), ready in "
            << absl::FormatDuration(absl::Now() - start) << "\n"
            << "cached in " << (in.data_dir.empty() ? DefaultPdbDirectory() : in.data_dir + "/pdb") << "\n";
  // A server reads the tables of its own data directory: built elsewhere,
  // they would be built again there without a word.
  if (in.data_dir.empty()) {
    std::cout << "a server reads its --data-dir's pdb/ instead; to build them for scripts/run, give --data-dir "
                 "npuzzle-data\n";
  }
  return kExitAnswer;
}

}  // namespace npuzzle
