#include "engine/search.h"

#include <array>
#include <utility>

namespace npuzzle {
namespace {

constexpr std::array<std::pair<SearchStatus, absl::string_view>, 7> kNames = {{
    {SearchStatus::kSolved, "solved"},
    {SearchStatus::kUnsolvable, "unsolvable"},
    {SearchStatus::kNodeLimit, "node_limit"},
    {SearchStatus::kTimeLimit, "time_limit"},
    {SearchStatus::kMemoryLimit, "memory_limit"},
    {SearchStatus::kDepthLimit, "depth_limit"},
    {SearchStatus::kCancelled, "cancelled"},
}};

}  // namespace

absl::string_view StatusName(SearchStatus s) {
  for (const auto& [status, name] : kNames) {
    if (status == s) return name;
  }
  return "unknown";
}

bool IsLimit(SearchStatus s) {
  return s == SearchStatus::kNodeLimit || s == SearchStatus::kTimeLimit || s == SearchStatus::kMemoryLimit ||
         s == SearchStatus::kDepthLimit;
}

std::optional<SearchStatus> StatusFromName(absl::string_view name) {
  for (const auto& [status, n] : kNames) {
    if (n == name) return status;
  }
  return std::nullopt;
}

}  // namespace npuzzle
