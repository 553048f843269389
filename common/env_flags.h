// Every flag of an npuzzle binary may also come from the environment, as
// containers prefer: --max-queued from NPUZZLE_MAX_QUEUED. The command
// line wins over the environment.
#ifndef NPUZZLE_COMMON_ENV_FLAGS_H_
#define NPUZZLE_COMMON_ENV_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace npuzzle {

// Call before absl::ParseCommandLine. An unparsable value is an error
// naming the variable.
absl::Status ApplyEnvironmentFlags();

// The whole start-up of a service program's flags: --dashed names, then
// NPUZZLE_<FLAG> variables, then the command line. Exits with status 2 and
// a message naming the variable when one cannot be parsed.
// Returns the arguments that are not flags (a command), argv[0] left out.
// Also turns off Abseil's per-lock deadlock detection (tests keep it).
std::vector<std::string> ParseServiceFlags(int argc, char** argv, const char* usage);

// Writes `contents` to `path` whole or not at all (a temporary file, then
// a rename), so a process waiting for the file never reads half of it.
void WritePortFile(const std::string& path, const std::string& contents);

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_ENV_FLAGS_H_
