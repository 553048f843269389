#include "service/workers/worker_pool.h"

namespace npuzzle {

Worker& WorkerPool::Add(std::shared_ptr<WorkerLink> link, const std::string& id, int capacity, absl::Time now) {
  WorkerLink* key = link.get();
  Worker& w = workers_[key];
  w.link = std::move(link);
  w.id = id;
  w.capacity = std::max(1, capacity);
  w.last_seen = now;
  by_id_[id] = key;
  File(w);
  return w;
}

std::set<LeaseKey> WorkerPool::Remove(WorkerLink* link) {
  auto it = workers_.find(link);
  if (it == workers_.end()) return {};
  Unfile(it->second);
  if (auto id = by_id_.find(it->second.id); id != by_id_.end() && id->second == link) by_id_.erase(id);
  std::set<LeaseKey> running = std::move(it->second.running);
  running_ -= static_cast<int64_t>(running.size());
  for (const LeaseKey& lease : running) Ended(lease);
  workers_.erase(it);
  return running;
}

Worker* WorkerPool::Find(WorkerLink* link) {
  auto it = workers_.find(link);
  return it == workers_.end() ? nullptr : &it->second;
}

Worker* WorkerPool::FindById(const std::string& id) {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : Find(it->second);
}

Worker* WorkerPool::Freest() { return by_free_.empty() ? nullptr : Find(by_free_.begin()->second); }

void WorkerPool::Assign(Worker& w, const LeaseKey& lease, const std::string& tenant) {
  Unfile(w);
  if (w.running.insert(lease).second) {
    ++running_;
    tenant_of_lease_[lease] = tenant;
    ++leases_by_tenant_[tenant];
  }
  File(w);
}

bool WorkerPool::Release(Worker& w, const LeaseKey& lease) {
  Unfile(w);
  const bool held = w.running.erase(lease) > 0;
  if (held) {
    --running_;
    Ended(lease);
  }
  File(w);
  return held;
}

void WorkerPool::Ended(const LeaseKey& lease) {
  auto it = tenant_of_lease_.find(lease);
  if (it == tenant_of_lease_.end()) return;
  if (--leases_by_tenant_[it->second] == 0) leases_by_tenant_.erase(it->second);
  tenant_of_lease_.erase(it);
}

int64_t WorkerPool::LeasesOf(const std::string& tenant) const {
  auto it = leases_by_tenant_.find(tenant);
  return it == leases_by_tenant_.end() ? 0 : it->second;
}

void WorkerPool::SetDraining(Worker& w, bool draining) {
  Unfile(w);
  w.draining = draining;
  File(w);
}

std::vector<WorkerLink*> WorkerPool::SilentSince(absl::Time since) const {
  std::vector<WorkerLink*> silent;
  for (const auto& [link, w] : workers_) {
    if (w.last_seen < since) silent.push_back(link);
  }
  return silent;
}

std::vector<WorkerLink*> WorkerPool::Links() const {
  std::vector<WorkerLink*> links;
  for (const auto& [link, w] : workers_) links.push_back(link);
  return links;
}

int64_t WorkerPool::free_slots() const {
  int64_t free = 0;
  for (const auto& [link, w] : workers_) free += w.free_slots();
  return free;
}

}  // namespace npuzzle
