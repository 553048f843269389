// JobQueue: the jobs waiting for a worker, in the order they are handed
// out. Higher priority first; within a priority, tenants take turns (round
// robin), so one tenant's backlog never holds back another's job; within a
// tenant, oldest (lowest submission seq) first. A job may carry a time
// before which it is not handed out (after a restart, so that its worker
// can reconnect and keep it), and a tenant may be passed over while it is
// at its running quota. Not thread-safe: the job manager guards it.
#ifndef NPUZZLE_SERVICE_JOBS_JOB_QUEUE_H_
#define NPUZZLE_SERVICE_JOBS_JOB_QUEUE_H_

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

class JobQueue {
 public:
  // Queues the job (its id, tenant and priority) with submission number
  // `seq`; a job already queued is left where it is.
  void Push(const v1::Job& job, int64_t seq, absl::Time not_before = absl::InfinitePast());
  // Whether the job was queued.
  bool Erase(const std::string& id);
  bool Contains(const std::string& id) const { return entries_.contains(id); }
  size_t size() const { return entries_.size(); }
  // The highest priority of a queued job, if any is queued.
  std::optional<int32_t> TopPriority() const {
    if (levels_.empty()) return std::nullopt;
    return static_cast<int32_t>(-levels_.begin()->first);
  }
  size_t QueuedOf(const std::string& tenant) const;
  // The job's place in the order PopReady hands jobs out (1: next), were
  // every tenant free to run and every job ready; 0 if it is not queued.
  size_t Position(const std::string& id) const;
  const absl::flat_hash_map<std::string, size_t>& QueuedByTenant() const { return queued_by_tenant_; }

  // Takes the next job that may be handed out at `now`, skipping tenants
  // for which may_run(tenant) is false.
  std::optional<std::string> PopReady(absl::Time now, const std::function<bool(const std::string&)>& may_run);

 private:
  struct Entry {
    int32_t priority;
    int64_t seq;
    std::string tenant;
    absl::Time not_before;
  };
  // The jobs of one priority: each tenant's in seq order, and the tenants
  // in the order of their next turn.
  struct Level {
    std::map<std::string, std::set<std::pair<int64_t, std::string>>> by_tenant;
    std::list<std::string> turns;
  };

  // Priorities are int32, so their negation cannot overflow in 64 bits:
  // the map's first level is the highest priority.
  std::map<int64_t, Level> levels_;
  absl::flat_hash_map<std::string, Entry> entries_;
  absl::flat_hash_map<std::string, size_t> queued_by_tenant_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_JOB_QUEUE_H_
