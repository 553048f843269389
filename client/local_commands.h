// The commands that run the engine in this process: `solve` (one board or
// a file of problems) and `gen` (random instances).
#ifndef NPUZZLE_CLIENT_LOCAL_COMMANDS_H_
#define NPUZZLE_CLIENT_LOCAL_COMMANDS_H_

namespace npuzzle {

// Each returns the process exit code: 0 when every problem got an answer
// (unsolvable included), 2 on bad input, 3 when a limit left one
// unanswered.
int RunLocalSolve();
int RunGenerate();
// `pdb`: load or build the pattern tables a solve would use, and report
// their size and how long that took.
int RunPdb();

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_LOCAL_COMMANDS_H_
