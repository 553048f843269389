// npuzzle: solve sliding-tile puzzles locally, or as jobs on an npuzzle
// server. The commands are in client/commands.cc.
#include "client/commands.h"

int main(int argc, char** argv) { return npuzzle::RunCommandLine(argc, argv); }
