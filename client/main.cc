// npuzzle: solve sliding-tile puzzles locally, or (later) through the service.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "client/local_commands.h"
#include "client/remote_commands.h"
#include "common/flag_names.h"

namespace {

constexpr char kUsage[] = R"(npuzzle COMMAND [flags]

commands:
  solve   solve boards: --board B | --file F (here, or on a server with --server HOST:PORT)
  gen     print random solvable boards: --rows R --cols C [--walk K] [--count N] [--seed S]
  pdb     build or load pattern databases: --rows R --cols C [--goal-preset G] [--pdb-preset P]
  submit  queue jobs on a server: --server HOST:PORT --board B [--priority N] [--label k=v] [--request-id ID]
  watch   follow a job to its result: --server HOST:PORT --job ID
  get     show a job: --server HOST:PORT --job ID
  cancel  cancel a job: --server HOST:PORT --job ID
  list    list jobs, newest first: --server HOST:PORT [--state running] [--label k=v] [--page-token T]

examples:
  npuzzle solve --board "8 1 3 4 0 2 7 6 5"
  npuzzle solve --board "134 8b5 726" --goal-preset snail --algorithm idastar --heuristic linear-conflict
  npuzzle gen --rows 4 --cols 4 --count 10 --seed 7 | npuzzle solve --goal-preset standard --json
  npuzzle solve --board "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3" --goal-preset blank-first \
      --algorithm idastar --heuristic pdb --pdb-preset 7-8
  npuzzle solve --server localhost:50051 --board "8 1 3 4 0 2 7 6 5" --algorithm idastar
  NPUZZLE_TOKEN=... npuzzle list --server host:50051 --tls-ca ca.pem   # a server with TLS and tokens

run 'npuzzle --helpfull' for every flag)";

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  npuzzle::NormalizeFlagNames(argc, argv);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string command = args.size() > 1 ? args[1] : "";
  if (args.size() > 2) {
    std::cerr << "npuzzle: unexpected argument '" << args[2] << "'\n";
    return 2;
  }
  if (command == "solve") return npuzzle::RemoteRequested() ? npuzzle::RunRemote(command) : npuzzle::RunLocalSolve();
  if (command == "submit" || command == "watch" || command == "get" || command == "cancel" || command == "list") {
    return npuzzle::RunRemote(command);
  }
  if (command == "gen") return npuzzle::RunGenerate();
  if (command == "pdb") return npuzzle::RunPdb();
  std::cerr << (command.empty() ? "" : "npuzzle: unknown command '" + command + "'\n\n") << kUsage << "\n";
  return 2;
}
