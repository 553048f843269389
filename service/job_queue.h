// JobQueue: the jobs waiting for a worker, best first: higher priority,
// then older (lower submission seq). A job may carry a time before which
// it is not handed out (after a restart, so that its worker can reconnect
// and keep it). Not thread-safe: the job manager guards it.
#ifndef NPUZZLE_SERVICE_JOB_QUEUE_H_
#define NPUZZLE_SERVICE_JOB_QUEUE_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace npuzzle {

class JobQueue {
 public:
  // A job already queued is left where it is.
  void Push(const std::string& id, int32_t priority, int64_t seq, absl::Time not_before = absl::InfinitePast());
  // Whether the job was queued.
  bool Erase(const std::string& id);
  bool Contains(const std::string& id) const { return entries_.contains(id); }
  size_t size() const { return entries_.size(); }

  // Takes the best job that may be handed out at `now`, if any.
  std::optional<std::string> PopReady(absl::Time now);

 private:
  // The one place the order is defined. Priorities are int32, so their
  // negation cannot overflow in 64 bits.
  using Key = std::tuple<int64_t, int64_t, std::string>;
  static Key KeyOf(const std::string& id, int32_t priority, int64_t seq) {
    return {-static_cast<int64_t>(priority), seq, id};
  }
  struct Entry {
    Key key;
    absl::Time not_before;
  };

  std::set<Key> order_;
  absl::flat_hash_map<std::string, Entry> entries_;
  // How many queued jobs have a not_before; while none do, the best job
  // is always ready.
  size_t held_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOB_QUEUE_H_
