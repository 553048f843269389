#include "client/commands.h"

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace npuzzle {
namespace {

using Flags = std::vector<absl::string_view>;

Flags Join(std::initializer_list<Flags> parts) {
  Flags all;
  for (const Flags& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

const Flags kProblem = {"board", "file", "rows", "cols", "goal", "goal_preset"};
const Flags kSearch = {"algorithm",   "heuristic",     "weight",    "pdb_preset", "pdb_groups", "max_nodes",
                       "max_time_ms", "max_memory_mb", "max_depth", "seed",       "threads"};
const Flags kTables = {"pdb_cache_mb", "pdb_mirror", "data_dir"};
const Flags kServer = {"server", "tls_ca", "tls_server_name", "token"};
const Flags kJobSpec = {"priority", "label", "request_id", "max_workers"};

const std::vector<Command>& Table() {
  static const std::vector<Command>* table = new std::vector<Command>{
      {"solve", "--board B | --file F [--server HOST:PORT]",
       "solve boards, here or (with --server) as jobs on a server, following each to its result",
       Join({kProblem, kSearch, kTables, {"json", "show_steps", "progress"}, kServer, kJobSpec})},
      {"gen",
       "--rows R --cols C [--walk K] [--count N] [--seed S]",
       "print random solvable boards, one a line",
       {"rows", "cols", "goal", "goal_preset", "walk", "count", "seed"}},
      {"pdb", "--rows R --cols C [--pdb-preset P | --pdb-groups G]",
       "build pattern databases into the table cache (or load them, if there)",
       Join({{"rows", "cols", "goal", "goal_preset", "pdb_preset", "pdb_groups", "max_memory_mb", "max_time_ms"},
             kTables})},
      {"submit", "--server HOST:PORT --board B | --file F",
       "queue jobs on a server, one per board; prints each job's id on a line",
       Join({kServer, kProblem, kSearch, kJobSpec, {"json"}})},
      {"watch", "--server HOST:PORT [--job ID] [ID ...] [--label K=V]",
       "follow jobs to their results: one job in full, several (or every job with the labels) a summary line each",
       Join({kServer, {"job", "label", "json", "show_steps"}})},
      {"get", "--server HOST:PORT --job ID", "show a job", Join({kServer, {"job", "json", "show_steps"}})},
      {"cancel", "--server HOST:PORT --job ID", "cancel a job", Join({kServer, {"job", "json"}})},
      {"list", "--server HOST:PORT [--state S] [--label K=V] [--page-token T]", "list jobs, newest first",
       Join({kServer, {"state", "label", "page_size", "page_token", "json"}})},
  };
  return *table;
}

std::string Dashed(absl::string_view name) { return absl::StrReplaceAll(name, {{"_", "-"}}); }

}  // namespace

const Command* FindCommand(absl::string_view name) {
  for (const Command& c : Table()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string CommandList() {
  std::string out = "commands:\n";
  for (const Command& c : Table())
    absl::StrAppend(&out, "  ", c.name, std::string(8 - c.name.size(), ' '), c.summary, "\n");
  return out;
}

std::string CommandHelp(const Command& command) {
  std::string out =
      absl::StrCat("npuzzle ", command.name, " ", command.synopsis, "\n\n", command.summary, "\n\nflags:\n");
  for (absl::string_view name : command.flags) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) {
      absl::StrAppend(&out, "  --", Dashed(name), "  (not a flag of this program: a mistake in client/commands.cc)\n");
      continue;
    }
    const std::string default_value = flag->DefaultValue();
    const std::string help = flag->Help();
    // Some help texts say their default in words already.
    const bool says_default = absl::StrContains(help, "(default");
    absl::StrAppend(&out, "  --", Dashed(name), "  ", help,
                    default_value.empty() || says_default ? "" : absl::StrCat(" (default: ", default_value, ")"), "\n");
  }
  return out;
}

}  // namespace npuzzle
