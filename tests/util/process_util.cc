#include "tests/util/process_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"

namespace npuzzle::testing {

CommandResult RunCommand(const std::string& command) {
  TempDir dir;
  const std::string err_path = dir.path() + "/stderr";
  CommandResult result;
  FILE* pipe = popen((command + " 2>" + err_path).c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream text;
  text << err.rdbuf();
  result.err = text.str();
  return result;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "npuzzle-test-XXXXXX").string();
  path_ = mkdtemp(pattern.data());
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::Write(const std::string& name, const std::string& contents) const {
  const std::string file = path_ + "/" + name;
  std::ofstream(file) << contents;
  return file;
}

absl::Duration Scaled(absl::Duration d) {
  static const double factor = [] {
    const char* text = std::getenv("NPUZZLE_TEST_TIME_SCALE");
    double f = 1;
    return text != nullptr && absl::SimpleAtod(text, &f) && f >= 1 ? f : 1.0;
  }();
  return d * factor;
}

}  // namespace npuzzle::testing
