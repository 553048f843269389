#include "engine/limits.h"

#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace npuzzle {
namespace {

std::string Name(absl::string_view field, LimitNames names) {
  if (names == LimitNames::kProto) return absl::StrCat("limits.", field);
  std::string flag = absl::StrCat("--", field);
  for (char& c : flag) c = c == '_' ? '-' : c;
  return flag;
}

absl::Status TooLarge(absl::string_view field, LimitNames names, uint64_t value, uint64_t max) {
  return absl::InvalidArgumentError(absl::StrCat(Name(field, names), " ", value, " is too large (at most ", max, ")"));
}

}  // namespace

absl::StatusOr<SearchLimits> ConvertLimits(const LimitUnits& u, LimitNames names) {
  if (u.max_time_ms > kMaxTimeMs) return TooLarge("max_time_ms", names, u.max_time_ms, kMaxTimeMs);
  if (u.max_memory_mb > kMaxMemoryMb) {
    return TooLarge("max_memory_mb", names, u.max_memory_mb, kMaxMemoryMb);
  }
  if (u.max_depth < 0) {
    return absl::InvalidArgumentError(absl::StrCat(Name("max_depth", names), " must not be negative"));
  }
  if (u.max_depth > kMaxDepthLimit) {
    return TooLarge("max_depth", names, static_cast<uint64_t>(u.max_depth), kMaxDepthLimit);
  }
  SearchLimits limits;
  limits.max_expanded = u.max_nodes;
  if (u.max_time_ms != 0) limits.max_time = absl::Milliseconds(static_cast<int64_t>(u.max_time_ms));
  limits.max_memory_bytes = u.max_memory_mb << 20;
  limits.max_depth = static_cast<int>(u.max_depth);
  return limits;
}

uint64_t PhysicalMemoryMb() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 1024;
  return (static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)) >> 20;
}

uint64_t DefaultLocalMemoryMb() { return PhysicalMemoryMb() / 4 * 3; }

}  // namespace npuzzle
