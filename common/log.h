// The one log of every npuzzle program: standard error, a line per message,
// each starting with the local time and the program's name
// ("2026-11-27T03:32:52.123 npuzzle-server: serving ..."). A line is
// written with one call, so lines from several threads never interleave.
#ifndef NPUZZLE_COMMON_LOG_H_
#define NPUZZLE_COMMON_LOG_H_

#include <string>

#include "absl/strings/string_view.h"

namespace npuzzle {

// The name each line carries ("npuzzle-worker w1"); set once, before any
// thread logs.
void SetLogName(std::string name);

void Log(absl::string_view message);

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_LOG_H_
