#include "common/env_flags.h"

#include <cstdlib>
#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

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

}  // namespace npuzzle
