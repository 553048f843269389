// npuzzle: solve sliding-tile puzzles locally, or as jobs on an npuzzle server.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/commands.h"
#include "client/local_commands.h"
#include "client/remote_commands.h"
#include "common/flag_names.h"

namespace {

constexpr char kExamples[] = R"(examples:
  npuzzle solve --board "8 1 3 4 0 2 7 6 5"
  npuzzle solve --board "134 8b5 726" --goal-preset snail --algorithm idastar --heuristic linear-conflict
  npuzzle gen --rows 4 --cols 4 --count 10 --seed 7 | npuzzle solve --goal-preset standard --json
  npuzzle solve --board "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3" --goal-preset blank-first \
      --algorithm idastar --heuristic pdb --pdb-preset 7-8
  npuzzle solve --server localhost:50051 --board "8 1 3 4 0 2 7 6 5" --algorithm idastar
  npuzzle gen --count 20 | npuzzle submit --server localhost:50051 --label batch=1 --file -
  npuzzle watch --server localhost:50051 --label batch=1
  NPUZZLE_TOKEN=... npuzzle list --server host:50051 --tls-ca ca.pem   # a server with TLS and tokens

'npuzzle COMMAND --help' lists a command's flags; 'npuzzle --helpfull' every flag)";

std::string Usage() { return absl::StrCat("npuzzle COMMAND [flags]\n\n", npuzzle::CommandList(), "\n", kExamples); }

bool AsksForHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--helpshort") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(Usage());
  // absl's own --help would list the flags of main.cc only: answer it here,
  // with the command's flags when one is named.
  if (AsksForHelp(argc, argv)) {
    const npuzzle::Command* command = argc > 1 ? npuzzle::FindCommand(argv[1]) : nullptr;
    std::cout << (command != nullptr ? npuzzle::CommandHelp(*command) : Usage() + "\n");
    return 0;
  }
  npuzzle::NormalizeFlagNames(argc, argv);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string command = args.size() > 1 ? args[1] : "";
  // Only watch takes arguments: the jobs to follow.
  const std::vector<std::string> rest(args.size() > 2 ? args.begin() + 2 : args.end(), args.end());
  if (!rest.empty() && command != "watch") {
    std::cerr << "npuzzle: unexpected argument '" << rest.front() << "'\n";
    return 2;
  }
  if (command == "solve") return npuzzle::RemoteRequested() ? npuzzle::RunRemote(command) : npuzzle::RunLocalSolve();
  if (command == "submit" || command == "watch" || command == "get" || command == "cancel" || command == "list") {
    return npuzzle::RunRemote(command, rest);
  }
  if (command == "gen") return npuzzle::RunGenerate();
  if (command == "pdb") return npuzzle::RunPdb();
  std::cerr << (command.empty() ? "" : "npuzzle: unknown command '" + command + "'\n\n") << Usage() << "\n";
  return 2;
}
