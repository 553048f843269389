// The CLI's commands: what each does and which flags it reads, in one
// table that the usage text and `npuzzle COMMAND --help` are built from.
#ifndef NPUZZLE_CLIENT_COMMANDS_H_
#define NPUZZLE_CLIENT_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace npuzzle {

struct Command {
  absl::string_view name;
  absl::string_view synopsis;  // flags and arguments, for the usage line
  absl::string_view summary;
  std::vector<absl::string_view> flags;  // flag names as defined (snake_case)
};

const Command* FindCommand(absl::string_view name);

// "commands:" and one line per command.
std::string CommandList();

// The command's usage line, summary, and each of its flags with its help
// text and default.
std::string CommandHelp(const Command& command);

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_COMMANDS_H_
