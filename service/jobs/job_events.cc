#include "service/jobs/job_events.h"

namespace npuzzle {
namespace {

v1::JobEvent StateEvent(const v1::Job& job) {
  v1::JobEvent e;
  *e.mutable_state() = job;
  return e;
}

}  // namespace

void JobEvents::Watch(const v1::Job& now, std::shared_ptr<JobWatch> watch) {
  watch->Push(StateEvent(now), false);
  absl::MutexLock lock(&mu_);
  jobs_[now.id()].watches.push_back(std::move(watch));
}

void JobEvents::Wait(const std::string& id, absl::Time deadline, Done done) {
  absl::MutexLock lock(&mu_);
  jobs_[id].waiters.push_back({deadline, std::move(done)});
}

void JobEvents::State(const v1::Job& job) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job.id());
  if (it == jobs_.end() || it->second.watches.empty()) return;
  const v1::JobEvent e = StateEvent(job);
  for (auto& watch : it->second.watches) watch->Push(e, false);
}

void JobEvents::Progress(const std::string& id, const v1::Progress& progress) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.watches.empty()) return;
  v1::JobEvent e;
  *e.mutable_progress() = progress;
  for (auto& watch : it->second.watches) watch->Push(e, false);
}

std::vector<std::function<void()>> JobEvents::Final(const v1::Job& job) {
  Followers followers;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job.id());
    if (it == jobs_.end()) return {};
    followers = std::move(it->second);
    jobs_.erase(it);
  }
  const v1::JobEvent e = StateEvent(job);
  for (auto& watch : followers.watches) watch->Push(e, true);
  std::vector<std::function<void()>> calls;
  for (Waiter& w : followers.waiters) calls.push_back([done = std::move(w.done), job] { done(job); });
  return calls;
}

std::vector<std::pair<std::string, JobEvents::Done>> JobEvents::Expired(absl::Time now) {
  std::vector<std::pair<std::string, Done>> expired;
  absl::MutexLock lock(&mu_);
  for (auto& [id, followers] : jobs_) {
    std::vector<Waiter>& waiters = followers.waiters;
    for (auto w = waiters.begin(); w != waiters.end();) {
      if (w->deadline <= now) {
        expired.emplace_back(id, std::move(w->done));
        w = waiters.erase(w);
      } else {
        ++w;
      }
    }
  }
  return expired;
}

}  // namespace npuzzle
