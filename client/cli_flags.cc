#include "client/cli_flags.h"

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/goals.h"
#include "engine/limits.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/registry.h"
#include "engine/solver.h"

namespace npuzzle {

void BoardFlags(CLI::App& c, Invocation& in) {
  c.add_option("--board", in.board, "the start board, e.g. \"8 1 3 4 0 2 7 6 5\" or \"134 8b5 726\"");
  c.add_option("--file", in.file,
               "a file of boards, one a line (- for standard input, also read when no board is given)");
  c.add_flag("--pairs", in.pairs, "the file's lines pair up: a start board, then its goal (Kunkle's layout)");
}

void ShapeFlags(CLI::App& c, Invocation& in) {
  c.add_option("--rows", in.rows, "board rows (0: from the board text)")
      ->check(CLI::Range(0, kMaxBoardSide).description(""));
  c.add_option("--cols", in.cols, "board columns (0: from the board text, or --rows)")
      ->check(CLI::Range(0, kMaxBoardSide).description(""));
}

void GoalFlags(CLI::App& c, Invocation& in) {
  c.add_option("--goal", in.goal, "the goal board (default: --goal-preset)");
  c.add_option("--goal-preset", in.goal_preset,
               absl::StrCat(absl::StrJoin(GoalPresetNames(), ", "), " (default: standard)"));
}

void SearchFlags(CLI::App& c, Invocation& in) {
  c.add_option("--algorithm", in.algorithm, absl::StrCat(AlgorithmNames(), " (default: auto)"));
  c.add_option("--max-gap", in.max_gap,
               "auto and anytime: stop once the answer is at most this times the proven lower bound (e.g. 1.05)")
      ->check(CLI::Range(kMinGap, kMaxGap).description(""));
  c.add_option("--heuristic", in.heuristic, absl::StrCat(HeuristicNames(), " (pdb with --pdb-preset or --pdb-groups)"));
  c.add_option("--weight", in.weight, absl::StrCat("wastar's weight: f = g + weight h (default ", kDefaultWeight, ")"));
  c.add_option("--seed", in.seed, "break ties between equal successors at random, reproducibly from this seed");
  c.add_option("--threads", in.threads,
               "search threads for idastar, auto and anytime (0: every core here; the server's default there)")
      ->check(CLI::Range(0, 4096).description(""));
  PatternFlags(c, in);
}

void PatternFlags(CLI::App& c, Invocation& in) {
  c.add_option("--pdb-preset", in.pdb_preset,
               absl::StrCat("pattern databases: ", absl::StrJoin(PatternPresetNames(), ", "),
                            " (by default the board's own: 8 on 3x3, 6-6-3 on 4x4, 6-6-6-6 on 5x5); two joined by "
                            "'+' take the larger sum, e.g. 6-6-6-6+6-6-6-6b"));
  c.add_option("--pdb-groups", in.pdb_groups,
               "explicit pattern groups, e.g. \"1,2,3,4,5,6,7/8,9,10,11,12,13,14,15\"; two partitions joined by '+'");
}

void LimitFlags(CLI::App& c, Invocation& in) {
  c.add_option("--max-nodes", in.max_nodes, "stop after expanding this many states (0: no limit)");
  c.add_option("--max-time-ms", in.max_time_ms, "stop after this many milliseconds (0: no limit)");
  c.add_option("--max-memory-mb", in.max_memory_mb,
               absl::StrCat("stop before the search (open and closed sets, pattern tables it builds) needs more; here "
                            "at most this machine's memory (default ",
                            DefaultLocalMemoryMb(), ", three quarters of it); on a server its default unless set"));
  c.add_option("--max-depth", in.max_depth, "depth limit for dfs, iddfs and idastar (0: none)")
      ->check(CLI::NonNegativeNumber.description(""));
}

void TableFlags(CLI::App& c, Invocation& in) {
  c.add_option("--pdb-cache-mb", in.pdb_cache_mb,
               "size budget of the pattern table cache; least recently used tables no process holds are evicted "
               "(0: $NPUZZLE_PDB_CACHE_MB, else 4096)")
      ->check(CLI::Range(uint64_t{0}, kMaxMemoryMb).description(""));
  c.add_flag("--pdb-mirror", in.pdb_mirror,
             "also look up the transposed board in the pattern databases (on; --pdb-mirror=false: off)");
  c.add_flag("--pdb-zero-aware", in.pdb_zero_aware,
             "pattern tables that also count the blank's region: fewer nodes, about five times the memory");
  c.add_option("--data-dir", in.data_dir, "where pattern tables are cached (DIR/pdb)")
      ->envname("NPUZZLE_DATA_DIR")
      ->default_str("~/.cache/npuzzle");
}

void GenerateFlags(CLI::App& c, Invocation& in) {
  c.add_option("--count", in.count, "how many boards")->check(CLI::NonNegativeNumber.description(""));
  c.add_option("--walk", in.walk, "a random walk of this many moves from the goal (0: a uniformly random board)")
      ->check(CLI::NonNegativeNumber.description(""));
  c.add_option("--seed", in.seed, "the random boards' seed (default: a fresh one, printed on standard error)");
}

void ServerFlags(CLI::App& c, Invocation& in) {
  c.add_option("--server", in.server, "the npuzzle server (host:port); solve runs here without it");
  c.add_option("--tls-ca", in.tls_ca, "PEM CA that signed the server's certificate (empty: plaintext)");
  c.add_option("--tls-server-name", in.tls_server_name,
               "the name the server's certificate must hold (default: the host dialled)");
  c.add_option("--token", in.token, "bearer token for a server that requires one")->envname("NPUZZLE_TOKEN");
}

void JobSpecFlags(CLI::App& c, Invocation& in) {
  c.add_option("--priority", in.priority, "higher runs first");
  c.add_option("--label", in.labels, "a key=value label of the job (repeat for more)")->take_all();
  c.add_option("--request-id", in.request_id, "idempotency key: the same key names the same job");
  c.add_option("--max-workers", in.max_workers,
               "spread an idastar or iddfs job over up to this many workers (0 or 1: one worker)");
  c.add_option("--retain", in.retain,
               "delete the job this long after it ends, e.g. 10m or 24h (default and ceiling: the server's "
               "--retain-finished)");
}

void JobIdFlags(CLI::App& c, Invocation& in) {
  c.add_option("--job", in.job_ids, "the job's id (or give ids as arguments)")->take_all();
  c.add_option("ids", in.job_ids, "job ids")->take_all();
}

void RetryFlags(CLI::App& c, Invocation& in) {
  c.add_option("--request-id", in.request_id, "idempotency key: the same key names the same new job");
  c.add_option("--max-nodes", in.max_nodes, "the new job's node limit (any limit given replaces the old job's limits)");
  c.add_option("--max-time-ms", in.max_time_ms, "the new job's time limit in milliseconds");
  c.add_option("--max-memory-mb", in.max_memory_mb, "the new job's memory limit");
}

void LabelFilterFlag(CLI::App& c, Invocation& in) {
  c.add_option("--label", in.labels, "only jobs with this key=value label (repeat: all of them)")->take_all();
}

void ListFlags(CLI::App& c, Invocation& in) {
  c.add_option("--state", in.states, "queued, running, done, failed, cancelled (repeat for several)")->take_all();
  c.add_option("--page-size", in.page_size, "jobs per page")->check(CLI::Range(1, 1000).description(""));
  c.add_option("--page-token", in.page_token, "continue from the page that printed this token");
}

void JsonFlag(CLI::App& c, Invocation& in) {
  c.add_flag("--json", in.json, "print one JSON object per result (or event) per line");
}

void StepsFlag(CLI::App& c, Invocation& in) {
  c.add_flag("--show-steps", in.show_steps, "print every intermediate board");
}

void ProgressFlag(CLI::App& c, Invocation& in) {
  c.add_flag("--progress", in.progress, "show the search's progress on standard error while solving");
}

void DetachFlag(CLI::App& c, Invocation& in) {
  c.add_flag("--detach", in.detach,
             "with --server, Ctrl-C stops following the job and leaves it running (else it cancels it)");
}

}  // namespace npuzzle
