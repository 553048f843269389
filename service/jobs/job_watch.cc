#include "service/jobs/job_watch.h"

namespace npuzzle {

void JobWatch::Push(const v1::JobEvent& event, bool final) {
  std::function<void()> wakeup;
  {
    absl::MutexLock lock(&mu_);
    if (abandoned_ || final_queued_) return;
    if (event.has_progress()) {
      if (!events_.empty() && events_.back().has_progress()) {
        events_.back() = event;  // only the newest progress matters
      } else if (events_.size() >= kMaxBacklog) {
        return;
      } else {
        events_.push_back(event);
      }
    } else {
      events_.push_back(event);
      final_queued_ = final;
    }
    wakeup = wakeup_;
  }
  if (wakeup) wakeup();
}

std::optional<v1::JobEvent> JobWatch::Next(bool* last) {
  absl::MutexLock lock(&mu_);
  if (events_.empty()) return std::nullopt;
  v1::JobEvent e = std::move(events_.front());
  events_.pop_front();
  *last = final_queued_ && events_.empty();
  return e;
}

void JobWatch::SetWakeup(std::function<void()> wakeup) {
  absl::MutexLock lock(&mu_);
  wakeup_ = std::move(wakeup);
}

void JobWatch::Abandon() {
  absl::MutexLock lock(&mu_);
  abandoned_ = true;
  events_.clear();
  wakeup_ = nullptr;
}

}  // namespace npuzzle
