// The command lines of npuzzle's programs, on CLI11 (Debian's
// libcli11-dev): flags in kebab-case (snake_case is read too), each
// program's or command's own flags listed by --help with their defaults,
// NPUZZLE_<FLAG> environment variables for the service programs, and
// errors that name what is wrong, suggest the nearest flag and exit with
// status 2.
#ifndef NPUZZLE_COMMON_CLI_H_
#define NPUZZLE_COMMON_CLI_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace npuzzle::cli {

// A CLI11 app set up as every npuzzle program's: defaults shown in help,
// and help on -h and --help.
void Configure(CLI::App& app);

// Every option of `app` and of its commands also reads NPUZZLE_<NAME>
// (--max-queued: NPUZZLE_MAX_QUEUED); the command line wins.
void ReadEnvironment(CLI::App& app);

// Parses argv into `app`. --help prints the help of the command it follows
// and exits 0; any error prints "<program>: <what is wrong>" (with the
// nearest flag when one was misspelt) and exits 2.
void ParseOrExit(CLI::App& app, int argc, char** argv);

// The flag of `names` nearest to `given` (both with their dashes), or ""
// when none is near enough to be a likely slip.
std::string Nearest(const std::string& given, const std::vector<std::string>& names);

}  // namespace npuzzle::cli

#endif  // NPUZZLE_COMMON_CLI_H_
