#include "client/request_flags.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/board_parser.h"
#include "engine/goals.h"
#include "engine/limits.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/registry.h"

ABSL_FLAG(std::string, board, "", "start board, e.g. \"8 1 3 4 0 2 7 6 5\" or \"134 8b5 726\"");
ABSL_FLAG(std::string, goal, "", "goal board (default: --goal-preset)");
ABSL_FLAG(std::string, goal_preset, "", "goal preset: standard (default), blank-first, snail");
ABSL_FLAG(int, rows, 0, "board rows (default: from the board text)");
ABSL_FLAG(int, cols, 0, "board columns (default: from the board text)");
ABSL_FLAG(std::string, algorithm, "astar", npuzzle::AlgorithmNames());
ABSL_FLAG(std::string, heuristic, "manhattan",
          absl::StrCat(npuzzle::HeuristicNames(), " (pdb with --pdb-preset or --pdb-groups)"));
ABSL_FLAG(std::string, weight, "", "weight for wastar (default 2)");
ABSL_FLAG(uint64_t, max_nodes, 0, "stop after expanding this many states (0: no limit)");
ABSL_FLAG(uint64_t, max_time_ms, 0, "stop after this many milliseconds (0: no limit)");
ABSL_FLAG(uint64_t, max_memory_mb, npuzzle::DefaultLocalMemoryMb(),
          "stop before the search (open and closed sets, pattern tables it builds) needs more; the default "
          "is three quarters of this machine's memory, and a local solve may not ask for more than the "
          "machine has; remote jobs send it only when set to another value (else the server's default applies)");
ABSL_FLAG(int, max_depth, 0, "depth limit for dfs, iddfs and idastar (0: none)");
ABSL_FLAG(std::string, seed, "", "shuffle equal successors reproducibly with this seed");
ABSL_FLAG(int, threads, 0, "search threads for IDA* (0: every core)");
ABSL_FLAG(std::string, pdb_preset, "",
          absl::StrCat("pattern databases: ", absl::StrJoin(npuzzle::PatternPresetNames(), ", "),
                       " (by default the board's own: 8 on 3x3, 6-6-3 on 4x4, 6-6-6-6 on 5x5)"));
ABSL_FLAG(std::string, pdb_groups, "", "explicit pattern groups, e.g. \"1,2,3,4,5,6,7/8,9,10,11,12,13,14,15\"");
ABSL_FLAG(uint64_t, pdb_cache_mb, 0,
          "size budget of the pattern table cache; least recently used tables no process holds are evicted "
          "(0: $NPUZZLE_PDB_CACHE_MB, else 4096)");
ABSL_FLAG(bool, pdb_mirror, true, "also look up the transposed board in the pattern databases");
ABSL_FLAG(std::string, data_dir, "",
          "where pattern tables are cached (DIR/pdb); default $NPUZZLE_DATA_DIR or ~/.cache/npuzzle");

namespace npuzzle {

bool GoalFlagGiven() { return !absl::GetFlag(FLAGS_goal).empty() || !absl::GetFlag(FLAGS_goal_preset).empty(); }

absl::StatusOr<Board> ParseBoardWithFlags(absl::string_view text) {
  return ParseBoard(text, absl::GetFlag(FLAGS_rows), absl::GetFlag(FLAGS_cols));
}

absl::StatusOr<Board> GoalFromFlags(int rows, int cols) {
  const std::string goal = absl::GetFlag(FLAGS_goal);
  const std::string preset = absl::GetFlag(FLAGS_goal_preset);
  if (!goal.empty() && !preset.empty()) {
    return absl::InvalidArgumentError("give either --goal or --goal-preset, not both");
  }
  if (!goal.empty()) {
    absl::StatusOr<Board> board = ParseBoard(goal, rows, cols);
    if (!board.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("goal: ", board.status().message()));
    }
    return board;
  }
  return GoalPreset(preset.empty() ? "standard" : preset, rows, cols);
}

absl::StatusOr<SolveRequest> RequestFromFlags(RequestFor where) {
  SolveRequest request;
  request.algorithm = absl::GetFlag(FLAGS_algorithm);
  request.heuristic = absl::GetFlag(FLAGS_heuristic);
  if (const std::string w = absl::GetFlag(FLAGS_weight); !w.empty()) {
    double weight;
    if (!absl::SimpleAtod(w, &weight)) {
      return absl::InvalidArgumentError(absl::StrCat("--weight '", w, "' is not a number"));
    }
    request.weight = weight;
  }
  if (const std::string s = absl::GetFlag(FLAGS_seed); !s.empty()) {
    uint64_t seed;
    if (!absl::SimpleAtoi(s, &seed)) {
      return absl::InvalidArgumentError(absl::StrCat("--seed '", s, "' is not a whole number"));
    }
    request.options.seed = seed;
  }
  LimitUnits units{absl::GetFlag(FLAGS_max_nodes), absl::GetFlag(FLAGS_max_time_ms), absl::GetFlag(FLAGS_max_memory_mb),
                   absl::GetFlag(FLAGS_max_depth)};
  if (where == RequestFor::kLocal) {
    const uint64_t machine = PhysicalMemoryMb();
    if (units.max_memory_mb == 0 || units.max_memory_mb > machine) {
      return absl::InvalidArgumentError(absl::StrCat("--max-memory-mb ", units.max_memory_mb,
                                                     " is out of range for a local solve: 1 to ", machine,
                                                     " (this machine's memory)"));
    }
  } else if (const absl::CommandLineFlag& flag = absl::GetFlagReflectionHandle(FLAGS_max_memory_mb);
             flag.CurrentValue() == flag.DefaultValue()) {
    units.max_memory_mb = 0;  // this machine's size says nothing about the workers': the server's default
  }
  absl::StatusOr<SearchLimits> limits = ConvertLimits(units, LimitNames::kFlags);
  if (!limits.ok()) return limits.status();
  request.options.limits = *limits;
  const int threads = absl::GetFlag(FLAGS_threads);
  request.options.threads = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  HeuristicOptions& h = request.heuristic_options;
  h.pdb_preset = absl::GetFlag(FLAGS_pdb_preset);
  h.pdb_groups = absl::GetFlag(FLAGS_pdb_groups);
  h.pdb_mirror = absl::GetFlag(FLAGS_pdb_mirror);
  if (absl::GetFlag(FLAGS_pdb_cache_mb) > kMaxMemoryMb) {
    return absl::InvalidArgumentError(absl::StrCat("--pdb-cache-mb ", absl::GetFlag(FLAGS_pdb_cache_mb),
                                                   " is too large (at most ", kMaxMemoryMb, ")"));
  }
  h.pdb_cache_bytes = absl::GetFlag(FLAGS_pdb_cache_mb) << 20;
  if (const std::string dir = absl::GetFlag(FLAGS_data_dir); !dir.empty()) h.pdb_dir = dir + "/pdb";
  h.on_message = [](absl::string_view message) { std::cerr << "npuzzle: " << message << "\n"; };
  return request;
}

}  // namespace npuzzle
