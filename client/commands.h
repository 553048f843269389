// The npuzzle CLI's commands, in one table: each one's name, arguments,
// summary, the flag groups it takes, and what runs it: here (local), on a
// server (remote), or either (solve runs on the server --server names).
// The usage text, each command's --help and the dispatch are all read
// from the table.
#ifndef NPUZZLE_CLIENT_COMMANDS_H_
#define NPUZZLE_CLIENT_COMMANDS_H_

#include <string_view>
#include <vector>

#include "client/cli_flags.h"
#include "client/remote_commands.h"

namespace npuzzle {

struct Command {
  std::string_view name;
  std::string_view summary;
  std::vector<FlagGroup> flags;
  int (*local)(const Invocation& in);               // null: needs --server
  int (*remote)(const Invocation& in, Remote& at);  // null: runs here only
};

// Runs `npuzzle COMMAND [flags] [ids]`; returns the exit status: 0 when
// every job or problem got an answer, 1 when a job failed, 2 on a usage or
// RPC error, 3 when a limit or a cancel left one unanswered.
int RunCommandLine(int argc, char** argv);

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_COMMANDS_H_
