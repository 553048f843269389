#include "service/store/list_page.h"

#include <algorithm>
#include <utility>

namespace npuzzle {

bool ListPage::Matches(const v1::Job& job) const {
  for (const auto& [key, value] : labels_) {
    auto it = job.spec().labels().find(key);
    if (it == job.spec().labels().end() || it->second != value) return false;
  }
  return states_.empty() || std::find(states_.begin(), states_.end(), job.state()) != states_.end();
}

bool ListPage::Add(int64_t seq, const v1::Job* job) {
  if (complete_ || static_cast<int>(page_.jobs.size()) == page_size_) {
    complete_ = true;
    return false;
  }
  page_.next_before = seq;
  if (job == nullptr || !Matches(*job)) return true;
  const size_t job_bytes = job->ByteSizeLong();
  if (!page_.jobs.empty() && bytes_ + job_bytes > JobStore::kMaxPageBytes) {
    page_.next_before = seq + 1;  // the next page starts with this job
    complete_ = true;
    return false;
  }
  bytes_ += job_bytes;
  page_.jobs.push_back(*job);
  return true;
}

JobStore::Page ListPage::Finish(bool walked_to_end) && {
  if (walked_to_end && !complete_) page_.next_before = 0;
  return std::move(page_);
}

}  // namespace npuzzle
