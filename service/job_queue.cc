#include "service/job_queue.h"

namespace npuzzle {

void JobQueue::Push(const std::string& id, int32_t priority, int64_t seq, absl::Time not_before) {
  const bool held = not_before != absl::InfinitePast();
  const auto [it, added] = entries_.try_emplace(id, Entry{KeyOf(id, priority, seq), not_before});
  if (!added) return;
  order_.insert(it->second.key);
  if (held) ++held_;
}

bool JobQueue::Erase(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  order_.erase(it->second.key);
  if (it->second.not_before != absl::InfinitePast()) --held_;
  entries_.erase(it);
  return true;
}

std::optional<std::string> JobQueue::PopReady(absl::Time now) {
  for (const Key& key : order_) {
    const std::string& id = std::get<2>(key);
    if (held_ > 0 && entries_.at(id).not_before > now) continue;
    std::string ready = id;
    Erase(ready);
    return ready;
  }
  return std::nullopt;
}

}  // namespace npuzzle
