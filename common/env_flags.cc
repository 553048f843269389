#include "common/env_flags.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/flag_names.h"

namespace npuzzle {

absl::Status ApplyEnvironmentFlags() {
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    const std::string variable = absl::StrCat("NPUZZLE_", absl::AsciiStrToUpper(name));
    const char* value = std::getenv(variable.c_str());
    if (value == nullptr) continue;
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(absl::StrCat(variable, "='", value, "': ", error));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> ParseServiceFlags(int argc, char** argv, const char* usage) {
  absl::SetProgramUsageMessage(usage);
  NormalizeFlagNames(argc, argv);
  if (absl::Status s = ApplyEnvironmentFlags(); !s.ok()) {
    std::cerr << std::filesystem::path(argv[0]).filename().string() << ": " << s.message() << "\n";
    std::exit(2);
  }
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  // Abseil checks lock order on every lock unless told not to, which the
  // services' hot paths pay for; the test binaries keep the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return std::vector<std::string>(rest.begin() + 1, rest.end());
}

void WritePortFile(const std::string& path, const std::string& contents) {
  const std::string temporary = path + ".tmp";
  std::ofstream(temporary) << contents;
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
}

}  // namespace npuzzle
