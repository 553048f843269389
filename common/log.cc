#include "common/log.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace npuzzle {
namespace {

std::string& LogName() {
  static std::string* name = new std::string("npuzzle");
  return *name;
}

}  // namespace

void SetLogName(std::string name) { LogName() = std::move(name); }

void Log(absl::string_view message) {
  const std::string line = absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3S ", absl::Now(), absl::LocalTimeZone()),
                                        LogName(), ": ", message, "\n");
  // One write(2): stdio's stream may split a line between two threads.
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace npuzzle
