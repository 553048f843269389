// CLI11's App, declared for headers that only name it. CLI11 is
// header-only, and a file that includes it takes seconds longer to compile
// (11 s under the sanitizers), so headers declare it from here and only
// the files that build command lines include CLI/CLI.hpp.
#ifndef NPUZZLE_COMMON_CLI_FWD_H_
#define NPUZZLE_COMMON_CLI_FWD_H_

namespace CLI {
class App;
}  // namespace CLI

#endif  // NPUZZLE_COMMON_CLI_FWD_H_
