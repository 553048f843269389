#include "service/jobs/job_queue.h"

#include <algorithm>

namespace npuzzle {

void JobQueue::Push(const v1::Job& job, int64_t seq, absl::Time not_before) {
  const auto [it, added] = entries_.try_emplace(job.id(), Entry{job.spec().priority(), seq, job.tenant(), not_before});
  if (!added) return;
  Level& level = levels_[-static_cast<int64_t>(job.spec().priority())];
  auto& jobs = level.by_tenant[job.tenant()];
  // A tenant new to the level waits for one turn of those already there.
  if (jobs.empty()) level.turns.push_back(job.tenant());
  jobs.emplace(seq, job.id());
  ++queued_by_tenant_[job.tenant()];
}

bool JobQueue::Erase(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  const Entry& e = it->second;
  auto level = levels_.find(-static_cast<int64_t>(e.priority));
  auto jobs = level->second.by_tenant.find(e.tenant);
  jobs->second.erase({e.seq, id});
  if (jobs->second.empty()) {
    level->second.by_tenant.erase(jobs);
    level->second.turns.remove(e.tenant);
    if (level->second.by_tenant.empty()) levels_.erase(level);
  }
  if (--queued_by_tenant_[e.tenant] == 0) queued_by_tenant_.erase(e.tenant);
  entries_.erase(it);
  return true;
}

size_t JobQueue::QueuedOf(const std::string& tenant) const {
  auto it = queued_by_tenant_.find(tenant);
  return it == queued_by_tenant_.end() ? 0 : it->second;
}

size_t JobQueue::Position(const std::string& id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return 0;
  const Entry& e = it->second;
  const int64_t own_level = -static_cast<int64_t>(e.priority);
  size_t ahead = 0;
  for (const auto& [negated_priority, level] : levels_) {
    if (negated_priority < own_level) {
      for (const auto& [tenant, jobs] : level.by_tenant) ahead += jobs.size();
      continue;
    }
    // Tenants take one job a turn in the order of `turns`, each going to
    // the back, so the job's tenant's k-th job goes in round k: before it,
    // k + 1 jobs of each tenant ahead of its own in the turns and k of
    // each behind (or all they have, if fewer).
    const auto& own = level.by_tenant.at(e.tenant);
    const size_t k = static_cast<size_t>(std::distance(own.begin(), own.find({e.seq, id})));
    bool behind = false;
    for (const std::string& tenant : level.turns) {
      if (tenant == e.tenant) {
        behind = true;
        continue;
      }
      ahead += std::min(level.by_tenant.at(tenant).size(), behind ? k : k + 1);
    }
    return ahead + k + 1;
  }
  return 0;  // unreachable: the job's level is there
}

std::optional<std::string> JobQueue::PopReady(absl::Time now, const std::function<bool(const std::string&)>& may_run) {
  for (auto& [negated_priority, level] : levels_) {
    for (auto turn = level.turns.begin(); turn != level.turns.end(); ++turn) {
      if (!may_run(*turn)) continue;
      const auto& jobs = level.by_tenant.at(*turn);
      const auto ready = std::find_if(jobs.begin(), jobs.end(), [&](const std::pair<int64_t, std::string>& job) {
        return entries_.at(job.second).not_before <= now;
      });
      if (ready == jobs.end()) continue;
      std::string id = ready->second;
      // The tenant's turn is used: it goes to the back (Erase drops it
      // instead if that was its last job here).
      level.turns.splice(level.turns.end(), level.turns, turn);
      Erase(id);
      return id;
    }
  }
  return std::nullopt;
}

}  // namespace npuzzle
