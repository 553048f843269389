#include "client/local_commands.h"

#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <random>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/problems.h"
#include "client/render.h"
#include "client/request_flags.h"
#include "engine/heuristics/pattern_database.h"
#include "engine/instances.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/puzzle.h"
#include "engine/solver.h"

ABSL_FLAG(bool, json, false, "print one JSON object per problem (or event) per line");
ABSL_FLAG(bool, show_steps, false, "print every intermediate board");
ABSL_FLAG(bool, progress, false, "show search progress on stderr while solving");
ABSL_FLAG(int, count, 1, "gen: how many boards");
ABSL_FLAG(int, walk, 0, "gen: random walk of this many moves from the goal (0: uniform)");
ABSL_DECLARE_FLAG(std::string, seed);
ABSL_DECLARE_FLAG(int, rows);
ABSL_DECLARE_FLAG(int, cols);

namespace npuzzle {

int RunLocalSolve() {
  absl::StatusOr<std::vector<Problem>> problems = ProblemsFromFlags();
  if (!problems.ok()) {
    std::cerr << "npuzzle solve: " << problems.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<SolveRequest> base = RequestFromFlags(RequestFor::kLocal);
  if (!base.ok()) {
    std::cerr << "npuzzle solve: " << base.status().message() << "\n";
    return 2;
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
      return 2;
    }
  }
  const bool json = absl::GetFlag(FLAGS_json);
  const bool live = absl::GetFlag(FLAGS_progress);
  int exit_code = 0;
  for (const Problem& problem : *problems) {
    SolveRequest request = *base;
    request.start = problem.start;
    request.goal = problem.goal;
    if (live) {
      request.options.on_progress = [](const Progress& p) {
        std::cerr << "\r\033[K" << RenderProgress(p) << std::flush;
      };
    }
    absl::StatusOr<SolveResult> result = Solve(request);
    if (live) std::cerr << "\r\033[K";
    if (!result.ok()) {
      std::cerr << "npuzzle solve" << (problem.line ? absl::StrCat(" (line ", problem.line, ")") : "") << ": "
                << result.status().message() << "\n";
      return 2;
    }
    if (result->status != SearchStatus::kSolved && result->status != SearchStatus::kUnsolvable) {
      exit_code = 3;
    }
    if (json) {
      std::cout << ResultToJson(problem.start, problem.goal, *result).dump() << "\n";
    } else {
      std::cout << RenderHuman(problem.start, problem.goal, *result, absl::GetFlag(FLAGS_show_steps))
                << (problems->size() > 1 ? "\n" : "");
    }
  }
  return exit_code;
}

int RunGenerate() {
  const int rows = absl::GetFlag(FLAGS_rows) ? absl::GetFlag(FLAGS_rows) : 3;
  const int cols = absl::GetFlag(FLAGS_cols) ? absl::GetFlag(FLAGS_cols) : rows;
  absl::StatusOr<Board> goal = GoalFromFlags(rows, cols);
  if (!goal.ok()) {
    std::cerr << "npuzzle gen: " << goal.status().message() << "\n";
    return 2;
  }
  uint64_t seed;
  if (const std::string s = absl::GetFlag(FLAGS_seed); s.empty()) {
    seed = std::random_device()();
    std::cerr << "npuzzle gen: seed " << seed << "\n";
  } else if (!absl::SimpleAtoi(s, &seed)) {
    std::cerr << "npuzzle gen: --seed '" << s << "' is not a whole number\n";
    return 2;
  }
  const int count = absl::GetFlag(FLAGS_count);
  const int walk = absl::GetFlag(FLAGS_walk);
  if (count < 0 || walk < 0) {
    std::cerr << "npuzzle gen: --count and --walk must not be negative\n";
    return 2;
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    const Board board = walk > 0 ? RandomWalk(*goal, walk, rng) : RandomSolvableBoard(*goal, rng);
    std::cout << board.ToString() << "\n";
  }
  return 0;
}

int RunPdb() {
  const int rows = absl::GetFlag(FLAGS_rows) ? absl::GetFlag(FLAGS_rows) : 4;
  const int cols = absl::GetFlag(FLAGS_cols) ? absl::GetFlag(FLAGS_cols) : rows;
  absl::StatusOr<Board> goal = GoalFromFlags(rows, cols);
  absl::StatusOr<SolveRequest> request = RequestFromFlags(RequestFor::kLocal);
  if (!goal.ok() || !request.ok()) {
    std::cerr << "npuzzle pdb: " << (goal.ok() ? request.status() : goal.status()).message() << "\n";
    return 2;
  }
  const Puzzle puzzle(*goal);
  const absl::Time start = absl::Now();
  absl::StatusOr<PatternDatabase> db = PatternDatabase::Create(puzzle, request->heuristic_options);
  if (!db.ok()) {
    std::cerr << "npuzzle pdb: " << db.status().message() << "\n";
    return 2;
  }
  uint64_t entries = 0;
  for (const auto& group : db->groups()) entries += PatternEntries(puzzle.cells(), static_cast<int>(group.size()));
  std::cout << "pattern databases for " << goal->Dimensions() << " goal " << goal->ToString() << "\n"
            << "groups " << FormatPatternGroups(db->groups()) << (db->mirrored() ? " (with mirror lookups)" : "")
            << "\n"
            << entries << " entries (" << entries / (1 << 20) << " MiB), ready in "
            << absl::FormatDuration(absl::Now() - start) << "\n";
  return 0;
}

}  // namespace npuzzle
