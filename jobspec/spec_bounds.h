// The bounds on everything a client sends beyond the puzzle itself: labels,
// request ids, priorities, retention, job ids and page tokens. Each violation is
// INVALID_ARGUMENT naming the field and the bound, and an oversized value
// is never echoed back (a 100 KB id in an error turns NOT_FOUND into a
// metadata-size failure).
#ifndef NPUZZLE_JOBSPEC_SPEC_BOUNDS_H_
#define NPUZZLE_JOBSPEC_SPEC_BOUNDS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

inline constexpr int kMaxLabels = 64;
inline constexpr size_t kMaxLabelKeyBytes = 63;
inline constexpr size_t kMaxLabelValueBytes = 255;
inline constexpr size_t kMaxRequestIdBytes = 128;
inline constexpr size_t kMaxJobIdBytes = 64;
inline constexpr size_t kMaxPageTokenBytes = 64;
inline constexpr int64_t kMaxRetainSeconds = int64_t{10} * 366 * 24 * 3600;
// Priorities are negated for the queue's order: this keeps that exact.
inline constexpr int32_t kMaxPriority = 1000000000;

// Labels, request id, priority and retention of a submitted spec.
absl::Status CheckSpecBounds(const v1::JobSpec& spec);

// Label filters of ListJobs, under the same rules as labels.
absl::Status CheckLabelFilter(const std::map<std::string, std::string>& labels);

// A job id's form (letters, digits, '-', '_', '.') and size.
absl::Status CheckJobId(absl::string_view id);

}  // namespace npuzzle

#endif  // NPUZZLE_JOBSPEC_SPEC_BOUNDS_H_
