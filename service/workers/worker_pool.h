// WorkerPool: the connected workers and the jobs each holds a lease on.
// It answers which worker has the most free slots without scanning them
// all, which workers' leases have run out, and who runs a job. Not
// thread-safe: the job manager guards it.
#ifndef NPUZZLE_SERVICE_WORKERS_WORKER_POOL_H_
#define NPUZZLE_SERVICE_WORKERS_WORKER_POOL_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "npuzzle/v1/worker.pb.h"
#include "service/workers/lease.h"

namespace npuzzle {

// One connected worker, as the transport presents it to the manager. The
// manager calls Send under its lock and Close only after releasing it.
class WorkerLink {
 public:
  virtual ~WorkerLink() = default;
  virtual void Send(const v1::CoordinatorMessage& message) = 0;  // never blocks
  virtual void Close(const std::string& why) = 0;
};

struct Worker {
  std::shared_ptr<WorkerLink> link;
  std::string id;
  std::string instance;  // WorkerHello.instance
  std::string host;
  int capacity = 1;
  std::set<LeaseKey> running;  // the jobs and units it holds leases on
  bool draining = false;
  absl::Time last_seen;
  uint64_t filed = 0;  // the pool's: when it was last filed under its free slots

  int free_slots() const { return draining ? 0 : std::max(0, capacity - static_cast<int>(running.size())); }
};

class WorkerPool {
 public:
  // Adds a worker; a worker with the same id must have been removed first.
  Worker& Add(std::shared_ptr<WorkerLink> link, const std::string& id, int capacity, absl::Time now);
  // Removes the worker and returns what it held.
  std::set<LeaseKey> Remove(WorkerLink* link);

  Worker* Find(WorkerLink* link);
  Worker* FindById(const std::string& id);

  // The worker with the most free slots, of those the one that has waited
  // longest with them (so equally free workers take work in turn), or null
  // if none has one.
  Worker* Freest();
  void Assign(Worker& w, const LeaseKey& lease, const std::string& tenant);
  // Whether `w` held the lease.
  bool Release(Worker& w, const LeaseKey& lease);
  void SetDraining(Worker& w, bool draining);
  void Heard(Worker& w, absl::Time now) { w.last_seen = now; }

  // Workers not heard from since `since`.
  std::vector<WorkerLink*> SilentSince(absl::Time since) const;
  // Every link, and whether any worker holds any job.
  std::vector<WorkerLink*> Links() const;
  bool AnyRunning() const { return running_ > 0; }
  // Leases held on the tenant's jobs: its running jobs.
  int64_t LeasesOf(const std::string& tenant) const;
  const absl::flat_hash_map<std::string, int64_t>& LeasesByTenant() const { return leases_by_tenant_; }
  size_t size() const { return workers_.size(); }
  int64_t running() const { return running_; }
  int64_t free_slots() const;

  template <typename F>
  void ForEach(F f) const {
    for (const auto& [link, w] : workers_) f(w);
  }

 private:
  // Re-files `w` under its free slots; call around every change to them.
  void Unfile(const Worker& w) { by_free_.erase({-w.free_slots(), w.filed}); }
  void File(Worker& w) {
    w.filed = ++files_;
    if (w.free_slots() > 0) by_free_.emplace(std::make_pair(-w.free_slots(), w.filed), w.link.get());
  }
  // Forgets the tenant of a lease that has ended.
  void Ended(const LeaseKey& lease);

  absl::flat_hash_map<WorkerLink*, Worker> workers_;
  absl::flat_hash_map<std::string, WorkerLink*> by_id_;
  std::map<std::pair<int, uint64_t>, WorkerLink*> by_free_;  // (-free slots, filed) -> link
  uint64_t files_ = 0;
  int64_t running_ = 0;
  absl::flat_hash_map<LeaseKey, std::string> tenant_of_lease_;
  absl::flat_hash_map<std::string, int64_t> leases_by_tenant_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_WORKERS_WORKER_POOL_H_
