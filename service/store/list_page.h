// ListPage: a listing's page assembled from candidate jobs walked newest
// first, the same way in every store. Matching jobs (all of the labels,
// any of the states) go in until the page holds page_size of them or
// JobStore::kMaxPageBytes; next_before says where the next page starts:
// below the last candidate looked at, or at the job that did not fit, or
// nowhere (0) once the walk reached its end. A store bounds the walk
// (JobStore::kMaxListScan) and then finishes a short page that says to go
// on.
#ifndef NPUZZLE_SERVICE_STORE_LIST_PAGE_H_
#define NPUZZLE_SERVICE_STORE_LIST_PAGE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "service/store/job_store.h"

namespace npuzzle {

class ListPage {
 public:
  ListPage(int page_size, const std::vector<v1::JobState>& states, const std::map<std::string, std::string>& labels)
      : page_size_(page_size), states_(states), labels_(labels) {}

  // The next candidate, at `seq` (below every one before); `job` is null
  // when the store already knows it does not match. False once the page
  // is complete: the walk stops, and this candidate is left for the next
  // page.
  bool Add(int64_t seq, const v1::Job* job);

  // The page, once the walk stopped; `walked_to_end`: no candidates were
  // left (those the page turned away aside).
  JobStore::Page Finish(bool walked_to_end) &&;

 private:
  bool Matches(const v1::Job& job) const;

  const int page_size_;
  const std::vector<v1::JobState>& states_;
  const std::map<std::string, std::string>& labels_;
  JobStore::Page page_;
  size_t bytes_ = 0;
  bool complete_ = false;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_LIST_PAGE_H_
