// Limits as people and protocols state them (milliseconds, megabytes) and
// their conversion to SearchLimits. Every conversion is checked: a value
// too large to convert is an error naming the field, never a wrap-around
// to a small number or to "no limit".
#ifndef NPUZZLE_ENGINE_LIMITS_H_
#define NPUZZLE_ENGINE_LIMITS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/search.h"

namespace npuzzle {

// 0 means no limit in every field.
struct LimitUnits {
  uint64_t max_nodes = 0;
  uint64_t max_time_ms = 0;
  uint64_t max_memory_mb = 0;
  int64_t max_depth = 0;
};

// The largest accepted values: far beyond any machine, well inside every
// conversion (a megabyte count times 2^20 fits in 64 bits, a millisecond
// count fits absl::Duration).
inline constexpr uint64_t kMaxTimeMs = uint64_t{1} << 50;    // ~35,000 years
inline constexpr uint64_t kMaxMemoryMb = uint64_t{1} << 40;  // 1 EiB
inline constexpr int64_t kMaxDepthLimit = 1 << 20;

// How errors name the fields: "--max-time-ms" or "limits.max_time_ms".
enum class LimitNames { kFlags, kProto };

absl::StatusOr<SearchLimits> ConvertLimits(const LimitUnits& units, LimitNames names);

// Three quarters of this machine's physical memory, in MiB: the local CLI's
// default memory limit.
uint64_t DefaultLocalMemoryMb();
// This machine's physical memory, in MiB.
uint64_t PhysicalMemoryMb();

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_LIMITS_H_
