// The commands that run the engine in this process: solve (boards from
// the command line or a file), gen (random boards) and pdb (build tables).
#ifndef NPUZZLE_CLIENT_LOCAL_COMMANDS_H_
#define NPUZZLE_CLIENT_LOCAL_COMMANDS_H_

#include "client/cli_flags.h"

namespace npuzzle {

// Each returns the exit status (client/exit_codes.h).
int SolveHere(const Invocation& in);
int Generate(const Invocation& in);
// Loads or builds the pattern tables a solve would use, and reports their
// size and how long that took.
int BuildTables(const Invocation& in);

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_LOCAL_COMMANDS_H_
