// The npuzzle CLI's flags, in groups that commands take whole: what one
// command line said (Invocation), and the functions that add a group's
// flags to a command. Flags belong to the commands that list their group
// (client/commands.cc): `npuzzle get --board` is an error, not a flag
// ignored.
#ifndef NPUZZLE_CLIENT_CLI_FLAGS_H_
#define NPUZZLE_CLIENT_CLI_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/cli_fwd.h"

namespace npuzzle {

struct Invocation {
  // Boards and goals.
  std::string board;
  std::string file;  // "-": standard input
  bool pairs = false;
  int rows = 0;
  int cols = 0;
  std::string goal;
  std::string goal_preset;
  // The search.
  std::string algorithm = "auto";
  double max_gap = 0;
  std::string heuristic = "manhattan";
  std::optional<double> weight;
  std::string pdb_preset;
  std::string pdb_groups;
  std::optional<uint64_t> seed;
  int threads = 0;
  uint64_t max_nodes = 0;
  uint64_t max_time_ms = 0;
  std::optional<uint64_t> max_memory_mb;  // unset: this machine's default here, the server's there
  int max_depth = 0;
  // Pattern tables.
  uint64_t pdb_cache_mb = 0;
  bool pdb_mirror = true;
  bool pdb_zero_aware = false;
  std::string data_dir;
  // gen.
  int count = 1;
  int walk = 0;
  // A server, and jobs on it.
  std::string server;
  std::string tls_ca;
  std::string tls_server_name;
  std::string token;
  int priority = 0;
  int max_workers = 0;
  std::vector<std::string> labels;
  std::string request_id;
  std::string retain;                // a duration; empty: the server's retention
  std::vector<std::string> job_ids;  // --job and arguments
  std::vector<std::string> states;
  int page_size = 50;
  std::string page_token;
  // Output.
  bool json = false;
  bool show_steps = false;
  bool progress = false;
  bool detach = false;
};

// Each adds one group of flags to a command.
using FlagGroup = void (*)(CLI::App& command, Invocation& invocation);
void BoardFlags(CLI::App& command, Invocation& in);       // --board, --file, --pairs
void ShapeFlags(CLI::App& command, Invocation& in);       // --rows, --cols
void GoalFlags(CLI::App& command, Invocation& in);        // --goal, --goal-preset
void SearchFlags(CLI::App& command, Invocation& in);      // --algorithm, --heuristic, --weight, --seed, --threads
void PatternFlags(CLI::App& command, Invocation& in);     // --pdb-preset, --pdb-groups
void LimitFlags(CLI::App& command, Invocation& in);       // --max-nodes, --max-time-ms, --max-memory-mb, --max-depth
void TableFlags(CLI::App& command, Invocation& in);       // --pdb-cache-mb, --pdb-mirror, --data-dir
void GenerateFlags(CLI::App& command, Invocation& in);    // --count, --walk, --seed
void ServerFlags(CLI::App& command, Invocation& in);      // --server, --tls-ca, --tls-server-name, --token
void JobSpecFlags(CLI::App& command, Invocation& in);     // --priority, --label, --request-id, --max-workers, --retain
void JobIdFlags(CLI::App& command, Invocation& in);       // --job ID, and IDs as arguments
void LabelFilterFlag(CLI::App& command, Invocation& in);  // --label (a filter)
void RetryFlags(CLI::App& command, Invocation& in);       // --request-id, and LimitFlags for the new job
void ListFlags(CLI::App& command, Invocation& in);        // --state, --page-size, --page-token
void JsonFlag(CLI::App& command, Invocation& in);         // --json
void StepsFlag(CLI::App& command, Invocation& in);        // --show-steps
void ProgressFlag(CLI::App& command, Invocation& in);     // --progress
void DetachFlag(CLI::App& command, Invocation& in);       // --detach

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_CLI_FLAGS_H_
