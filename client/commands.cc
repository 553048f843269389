#include "client/commands.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "client/local_commands.h"
#include "common/cli.h"

namespace npuzzle {
namespace {

constexpr char kExamples[] = R"(examples:
  npuzzle solve --board "8 1 3 4 0 2 7 6 5"
  npuzzle solve --board "134 8b5 726" --goal-preset snail --algorithm idastar --heuristic linear-conflict
  npuzzle gen --rows 4 --cols 4 --count 10 --seed 7 | npuzzle solve --json
  npuzzle solve --server localhost:50051 --board "8 1 3 4 0 2 7 6 5"
  npuzzle gen --count 20 | npuzzle submit --server localhost:50051 --label batch=1 --file -
  npuzzle watch --server localhost:50051 --label batch=1
  NPUZZLE_TOKEN=... npuzzle list --server host:50051 --tls-ca ca.pem   # a server with TLS and tokens
'npuzzle COMMAND --help' lists a command's flags.
)";

const std::vector<Command>& Table() {
  static const std::vector<Command>* table = new std::vector<Command>{
      {"solve",
       "solve boards, here or (with --server) as jobs on a server, following each to its answer",
       {BoardFlags, ShapeFlags, GoalFlags, SearchFlags, LimitFlags, TableFlags, JsonFlag, StepsFlag, ProgressFlag,
        ServerFlags, JobSpecFlags, DetachFlag},
       SolveHere,
       SolveOnServer},
      {"gen",
       "print random solvable boards for a goal, one a line",
       {ShapeFlags, GoalFlags, GenerateFlags},
       Generate,
       nullptr},
      {"pdb",
       "build the pattern databases a solve would use into the table cache (or load them, if there)",
       {ShapeFlags, GoalFlags, PatternFlags, LimitFlags, TableFlags},
       BuildTables,
       nullptr},
      {"submit",
       "queue jobs on a server, one per board, printing each job's id on a line",
       {ServerFlags, BoardFlags, ShapeFlags, GoalFlags, SearchFlags, LimitFlags, JobSpecFlags, JsonFlag},
       nullptr,
       Submit},
      {"watch",
       "follow jobs to their answers: one job in full, several (or every job with the labels) a line each",
       {ServerFlags, JobIdFlags, LabelFilterFlag, JsonFlag, StepsFlag},
       nullptr,
       Watch},
      {"get", "show jobs as they are now", {ServerFlags, JobIdFlags, JsonFlag, StepsFlag}, nullptr, Get},
      {"cancel", "cancel jobs", {ServerFlags, JobIdFlags, JsonFlag}, nullptr, Cancel},
      {"delete",
       "delete finished jobs now (the server deletes them after its retention anyway)",
       {ServerFlags, JobIdFlags},
       nullptr,
       Delete},
      {"list", "list jobs, newest first", {ServerFlags, ListFlags, LabelFilterFlag, JsonFlag}, nullptr, List},
      {"retry",
       "run failed, cancelled or limit-stopped jobs again as new jobs, printing each new job's id on a line",
       {ServerFlags, JobIdFlags, RetryFlags, JsonFlag},
       nullptr,
       Retry},
  };
  return *table;
}

}  // namespace

int RunCommandLine(int argc, char** argv) {
  CLI::App app("npuzzle: solve sliding-tile puzzles here, or as jobs on an npuzzle server.", "npuzzle");
  cli::Configure(app);
  app.require_subcommand(1);
  app.fallthrough(false);
  app.footer(kExamples);
  // Each command reads into its own Invocation: CLI11 also fills the flags
  // of commands not named from the environment (--data-dir from
  // NPUZZLE_DATA_DIR), which must not reach the one that runs.
  std::vector<Invocation> invocations(Table().size());
  std::vector<CLI::App*> subs;
  for (size_t i = 0; i < Table().size(); ++i) {
    const Command& command = Table()[i];
    CLI::App* sub = app.add_subcommand(std::string(command.name), std::string(command.summary));
    cli::Configure(*sub);
    for (FlagGroup add : command.flags) add(*sub, invocations[i]);
    subs.push_back(sub);
  }
  cli::ParseOrExit(app, argc, argv);
  for (size_t i = 0; i < subs.size(); ++i) {
    if (!subs[i]->parsed()) continue;
    const Command* command = &Table()[i];
    const Invocation& in = invocations[i];
    if (command->remote == nullptr || (in.server.empty() && command->local != nullptr)) return command->local(in);
    absl::StatusOr<Remote> remote = Remote::Dial(std::string(command->name), in);
    if (!remote.ok()) {
      std::cerr << "npuzzle " << command->name << ": " << remote.status().message() << "\n";
      return kExitUsage;
    }
    return command->remote(in, *remote);
  }
  return kExitUsage;
}

}  // namespace npuzzle
