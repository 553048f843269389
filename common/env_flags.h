// Every flag of an npuzzle binary may also come from the environment, as
// containers prefer: --max-queued from NPUZZLE_MAX_QUEUED. The command
// line wins over the environment.
#ifndef NPUZZLE_COMMON_ENV_FLAGS_H_
#define NPUZZLE_COMMON_ENV_FLAGS_H_

#include "absl/status/status.h"

namespace npuzzle {

// Call before absl::ParseCommandLine. An unparsable value is an error
// naming the variable.
absl::Status ApplyEnvironmentFlags();

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_ENV_FLAGS_H_
