// Running the project's binaries from tests: a command line in, its exit
// code and output back.
#ifndef NPUZZLE_TESTS_UTIL_PROCESS_UTIL_H_
#define NPUZZLE_TESTS_UTIL_PROCESS_UTIL_H_

#include <string>

#include "absl/time/time.h"

namespace npuzzle::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `command` through /bin/sh and waits for it.
CommandResult RunCommand(const std::string& command);

// A fresh temporary directory, removed with everything in it on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `contents` to path()/name and returns the full path.
  std::string Write(const std::string& name, const std::string& contents) const;

 private:
  std::string path_;
};

// A deadline a test asserts, stretched by NPUZZLE_TEST_TIME_SCALE (a
// number, default 1): the sanitizer stages run the same timing tests with
// the factor their slowdown needs, rather than skip them.
absl::Duration Scaled(absl::Duration d);

}  // namespace npuzzle::testing

#endif  // NPUZZLE_TESTS_UTIL_PROCESS_UTIL_H_
