// LeaseKey: what a worker holds a lease on. A job runs whole on one worker
// (unit 0) or, spread over workers, as work units, each its own lease
// under the job's id and the unit's id; the worker protocol carries both
// fields, so neither is ever packed into the other.
#ifndef NPUZZLE_SERVICE_WORKERS_LEASE_H_
#define NPUZZLE_SERVICE_WORKERS_LEASE_H_

#include <compare>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace npuzzle {

struct LeaseKey {
  std::string job_id;
  int64_t unit = 0;  // 0: the whole job

  bool is_unit() const { return unit != 0; }
  // "job-…" or "job-…, unit 7", for messages and logs.
  std::string ToString() const { return is_unit() ? absl::StrCat(job_id, ", unit ", unit) : job_id; }

  friend auto operator<=>(const LeaseKey&, const LeaseKey&) = default;
  friend bool operator==(const LeaseKey&, const LeaseKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const LeaseKey& k) {
    return H::combine(std::move(h), k.job_id, k.unit);
  }
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_WORKERS_LEASE_H_
