// The commands that talk to an npuzzle server (--server HOST:PORT):
// submit, watch, solve, get, cancel, list.
#ifndef NPUZZLE_CLIENT_REMOTE_COMMANDS_H_
#define NPUZZLE_CLIENT_REMOTE_COMMANDS_H_

#include <string>
#include <vector>

namespace npuzzle {

// Whether --server was given (solve then runs remotely).
bool RemoteRequested();

// Runs `command`; returns the exit code: 0 for an answer, 3 when a job
// ended without one (a limit, cancelled), 1 when it failed, 2 for bad
// input or an unreachable or refusing server.
int RunRemote(const std::string& command, const std::vector<std::string>& args = {});

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_REMOTE_COMMANDS_H_
