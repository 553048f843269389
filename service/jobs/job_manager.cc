#include "service/jobs/job_manager.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "jobspec/checkpoint.h"
#include "jobspec/job_state.h"
#include "jobspec/spec_bounds.h"
#include "service/jobs/admission.h"
#include "service/jobs/best_answer.h"
#include "service/workers/worker_messages.h"

namespace npuzzle {
namespace {

// How long Cancel waits for a queued job's cancellation to be stored.
constexpr absl::Duration kStoreWait = absl::Seconds(10);

}  // namespace

JobManager::JobManager(JobStore* store, ManagerOptions options)
    : store_(store),
      options_(std::move(options)),
      metrics_({.jobs_by_state = [store] { return store->CountByState(); },
                .store_usage = [store] { return store->DiskUsage(); },
                .counts = [this] { return Counts(); },
                .workers = [this] { return WorkerSamples(); },
                .tenants = [this] { return TenantSamples(); }}),
      lifecycle_(
          &events_, &metrics_,
          {.ending = [this](JobRecord& r) ABSL_NO_THREAD_SAFETY_ANALYSIS { splits_.Stop(r); },
           .later = [this](std::function<void()> call) ABSL_NO_THREAD_SAFETY_ANALYSIS { Later(std::move(call)); }}),
      splits_(&lifecycle_, &workers_, &events_, &metrics_, [this](const std::string& t) { return QuotaOf(t); }),
      scheduler_(&lifecycle_, &workers_, &splits_, &metrics_,
                 {.max_lost_attempts = options_.max_lost_attempts,
                  .quota_of = [this](const std::string& t) { return QuotaOf(t); }}),
      writer_(store, [this](std::vector<StoreWriter::Done>& done, const std::vector<absl::Status>& outcomes) {
        Committed(done, outcomes);
      }) {}

JobManager::~JobManager() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (housekeeper_.joinable()) housekeeper_.join();
  Sync();
}

// --- the lock and the writer ---

void JobManager::HandOff() {
  std::vector<StoreWriter::Write> writes = lifecycle_.TakeWrites();
  if (!writes.empty()) writer_.Append(std::move(writes));
}

void JobManager::Unlock() {
  HandOff();
  std::vector<std::function<void()>> later;
  later.swap(later_);
  mu_.Unlock();
  for (auto& f : later) f();
}

void JobManager::Committed(std::vector<StoreWriter::Done>& done, const std::vector<absl::Status>& outcomes) {
  // A failed commit fails every write in it: counted as none.
  if (!outcomes.empty() && outcomes.front().ok()) {
    metrics_.Committed(done.size());
  } else if (!outcomes.empty()) {
    metrics_.CommitFailed();
  }
  Locked lock(this);
  for (size_t i = 0; i < done.size(); ++i) {
    if (done[i]) done[i](outcomes[i]);
  }
}

void JobManager::Sync() { writer_.WaitIdle(); }

TenantQuota JobManager::QuotaOf(const std::string& tenant) const {
  return options_.quota_of ? options_.quota_of(tenant) : TenantQuota{};
}

void JobManager::Dispatch() {
  if (!stopping_) scheduler_.Dispatch(absl::Now());
}

absl::Status JobManager::Start() {
  absl::StatusOr<int64_t> last_seq = store_->LastSeq();
  if (!last_seq.ok()) return last_seq.status();
  absl::StatusOr<std::vector<JobStore::Row>> rows = store_->Unfinished();
  if (!rows.ok()) return rows.status();
  for (const JobStore::Row& row : *rows) WarmSplit(row.job.spec());
  absl::Status failed;
  {
    Locked lock(this);
    last_seq_ = *last_seq;
    lifecycle_.Reload(*std::move(rows), absl::Now() + options_.recovery_grace, [&failed](const absl::Status& stored) {
      if (!stored.ok()) failed = stored;
    });
  }
  Sync();
  if (!failed.ok()) return failed;
  housekeeper_ = std::thread([this] { Housekeeping(); });
  return absl::OkStatus();
}

// --- clients ---

void JobManager::Submit(const v1::JobSpec& submitted, Reply reply, const std::string& tenant) {
  if (absl::Status s = CheckSpecBounds(submitted); !s.ok()) return reply(s);
  // A retry gets its job even when the queue is full or the service is
  // draining: the request id is looked up before admission.
  if (std::optional<absl::StatusOr<v1::Job>> known = Resubmitted(submitted, tenant)) return reply(*std::move(known));
  absl::StatusOr<v1::Job> job = NewJob(submitted, tenant, options_.limits);
  if (!job.ok()) return reply(job.status());

  Locked lock(this);
  const absl::Status refused = Refusal(*job, accepting_, lifecycle_.queue(), options_.max_queued, QuotaOf(tenant));
  if (!refused.ok()) return Later([reply, refused] { reply(refused); });
  // Answered once stored: with the job as it then is (it may be running
  // already, or finishing), or with why it could not be stored.
  const std::string id = job->id();
  lifecycle_.Admit(*std::move(job), ++last_seq_,
                   [this, id, submitted, tenant, reply](const absl::Status& stored) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                     if (stored.ok()) {
                       // Not its final row, if it is finishing: that is not stored yet.
                       Later([reply, now = lifecycle_.Find(id)->job] { reply(now); });
                       return;
                     }
                     // Its assignment may have gone out ahead of the commit that failed.
                     const JobRecord& r = *lifecycle_.Find(id);
                     if (Worker* w = workers_.FindById(r.job.worker_id()); w != nullptr && workers_.Release(*w, {id})) {
                       w->link->Send(CancelMessage({id}, r.job.attempt()));
                     }
                     // A concurrent submission with the same request id was stored first.
                     const bool raced = absl::IsAlreadyExists(stored) && !submitted.request_id().empty();
                     Later([this, submitted, tenant, reply, stored, raced] {
                       std::optional<absl::StatusOr<v1::Job>> known;
                       if (raced) known = Resubmitted(submitted, tenant);
                       reply(known ? *std::move(known) : absl::StatusOr<v1::Job>(stored));
                     });
                   });
  Dispatch();
}

absl::StatusOr<v1::Job> JobManager::Submit(const v1::JobSpec& spec, const std::string& tenant) {
  absl::Notification answered;
  absl::StatusOr<v1::Job> answer;
  Submit(
      spec,
      [&](absl::StatusOr<v1::Job> job) {
        answer = std::move(job);
        answered.Notify();
      },
      tenant);
  answered.WaitForNotification();
  return answer;
}

std::optional<absl::StatusOr<v1::Job>> JobManager::Resubmitted(const v1::JobSpec& submitted,
                                                               const std::string& tenant) {
  if (submitted.request_id().empty()) return std::nullopt;
  absl::StatusOr<v1::Job> known = store_->FindByRequestId(tenant, submitted.request_id());
  if (absl::IsNotFound(known.status())) return std::nullopt;
  if (!known.ok()) return known.status();
  if (!SameRequest(submitted, known->spec())) {
    return absl::AlreadyExistsError(absl::StrCat("request_id '", submitted.request_id(), "' already names job ",
                                                 known->id(), ", which has a different spec"));
  }
  // The job it created, as it is now.
  absl::MutexLock lock(&mu_);
  if (const JobRecord* r = lifecycle_.Find(known->id())) return r->job;
  return known;
}

v1::Job JobManager::AsItStands(const JobRecord& r) {
  v1::Job job = r.job;
  job.set_queue_position(static_cast<int32_t>(lifecycle_.queue().Position(job.id())));
  return job;
}

absl::StatusOr<v1::Job> JobManager::Get(const std::string& id, const std::string& tenant) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  std::optional<v1::Job> unfinished;
  {
    absl::MutexLock lock(&mu_);
    if (const JobRecord* r = lifecycle_.Find(id)) unfinished = AsItStands(*r);
  }
  absl::StatusOr<v1::Job> job = unfinished ? *std::move(unfinished) : store_->Get(id);
  if (job.ok() && job->tenant() != tenant) return NoSuchJob(id);
  return job;
}

absl::Status JobManager::Delete(const std::string& id, const std::string& tenant) {
  if (absl::StatusOr<v1::Job> own = Get(id, tenant); !own.ok()) return own.status();
  {
    Locked lock(this);
    if (lifecycle_.Find(id) != nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("job ", id, " has not finished: cancel it first"));
    }
  }
  // Not in memory, so final in the store: the store checks again.
  return store_->DeleteFinished(id);
}

absl::StatusOr<v1::Job> JobManager::Cancel(const std::string& id, const std::string& tenant) {
  // A job's tenant never changes, so asking first is as good as asking
  // under the lock.
  if (absl::StatusOr<v1::Job> own = Get(id, tenant); !own.ok()) return own.status();
  v1::Job reply;
  bool unfinished = false;
  bool ending = false;
  absl::Notification stored;
  {
    Locked lock(this);
    if (JobRecord* r = lifecycle_.Find(id)) {
      unfinished = true;
      scheduler_.Cancel(*r);
      reply = r->job;
      ending = r->ending();
      // Its end is being stored: answer with it once it is.
      if (ending) {
        events_.Wait(id, absl::Now() + kStoreWait, [&](const v1::Job& now) {
          reply = now;
          stored.Notify();
        });
      }
    }
  }
  if (!unfinished) {
    absl::StatusOr<v1::Job> job = store_->Get(id);
    if (!job.ok()) return job.status();
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id, " has already finished (", JobStateName(job->state()), ")"));
  }
  if (ending) stored.WaitForNotification();
  return reply;
}

absl::Status JobManager::WhenFinished(const std::string& id, absl::Duration timeout,
                                      std::function<void(const v1::Job&)> done) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  {
    Locked lock(this);
    if (lifecycle_.Find(id) != nullptr) {
      events_.Wait(id, absl::Now() + timeout, std::move(done));
      return absl::OkStatus();
    }
  }
  absl::StatusOr<v1::Job> stored = store_->Get(id);
  if (!stored.ok()) return stored.status();
  done(*stored);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<JobWatch>> JobManager::Watch(const std::string& id, const std::string& tenant) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  auto watch = std::make_shared<JobWatch>();
  {
    Locked lock(this);
    if (const JobRecord* r = lifecycle_.Find(id)) {
      if (r->job.tenant() != tenant) return NoSuchJob(id);
      events_.Watch(AsItStands(*r), watch);
      return watch;
    }
  }
  absl::StatusOr<v1::Job> stored = store_->Get(id);
  if (!stored.ok()) return stored.status();
  if (stored->tenant() != tenant) return NoSuchJob(id);
  v1::JobEvent e;
  *e.mutable_state() = *std::move(stored);
  watch->Push(e, true);
  return watch;
}

absl::StatusOr<JobStore::Page> JobManager::List(const std::string& tenant, const std::vector<v1::JobState>& states,
                                                const std::map<std::string, std::string>& labels, int page_size,
                                                int64_t before) {
  if (absl::Status s = CheckLabelFilter(labels); !s.ok()) return s;
  absl::StatusOr<JobStore::Page> page = store_->List(tenant, states, labels, page_size, before);
  if (!page.ok()) return page;
  absl::MutexLock lock(&mu_);
  for (v1::Job& job : page->jobs) {
    // The store holds each job as of its last change of state; running
    // jobs also carry their latest progress here.
    if (const JobRecord* r = lifecycle_.Find(job.id()); r != nullptr && r->job.state() == job.state()) job = r->job;
  }
  return page;
}

// --- workers ---

absl::Status JobManager::Connected(std::shared_ptr<WorkerLink> link, const v1::WorkerHello& hello) {
  Locked lock(this);
  const absl::Time now = absl::Now();
  if (Worker* old = workers_.FindById(hello.worker_id())) {
    // Two live processes under one id would take each other's leases in
    // turn, and their jobs would fail as lost: the second is refused until
    // the first has gone quiet for a lease. The same process reconnecting
    // before its old link was noticed gone replaces it.
    if (old->instance != hello.instance() && now - old->last_seen < options_.lease_timeout) {
      return absl::AlreadyExistsError(absl::StrCat("worker id '", hello.worker_id(), "' is in use by a worker on ",
                                                   old->host, "; give each worker its own --worker-id"));
    }
    Later([stale = old->link] { stale->Close("replaced by a new connection from the same worker"); });
    scheduler_.Lost(old->link.get());
  }
  Worker& w = workers_.Add(link, hello.worker_id(), hello.capacity(), now);
  w.instance = hello.instance();
  w.host = hello.host();
  scheduler_.Reconnected(w, hello);
  Dispatch();
  return absl::OkStatus();
}

void JobManager::Received(WorkerLink* link, const v1::WorkerMessage& m) {
  Locked lock(this);
  Worker* w = workers_.Find(link);
  if (w == nullptr) return;
  workers_.Heard(*w, absl::Now());
  switch (m.message_case()) {
    case v1::WorkerMessage::kHeartbeat:
      for (const v1::RunningJob& r : m.heartbeat().running()) {
        const LeaseKey lease{r.job_id(), r.unit_id()};
        if (!scheduler_.Holds(*w, lease, r.attempt())) w->link->Send(CancelMessage(lease, r.attempt()));
      }
      break;
    case v1::WorkerMessage::kProgress:
      Progress(*w, m.progress());
      break;
    case v1::WorkerMessage::kCheckpoint:
      Checkpoint(*w, m.checkpoint());
      break;
    case v1::WorkerMessage::kFinished:
      scheduler_.Finished(*w, m.finished());
      break;
    case v1::WorkerMessage::kHandedBack:
      splits_.HandedBack(m.handed_back());
      break;
    case v1::WorkerMessage::kReleased:
      scheduler_.Released(*w, m.released());
      break;
    case v1::WorkerMessage::kDraining:
      workers_.SetDraining(*w, m.draining());
      break;
    default:
      break;
  }
  Dispatch();
}

void JobManager::Progress(const Worker& w, const v1::JobProgress& p) {
  if (p.unit_id() != 0) return splits_.Progress(w, p);
  if (JobRecord* r = scheduler_.Assigned(w, p.job_id(), p.attempt())) {
    v1::Progress progress = p.progress();
    WithStoredBest(r->job.checkpoint(), &progress);
    r->node_rate = progress.nodes_per_second();
    events_.Progress(r->job.id(), progress);
    progress.set_best_moves(r->job.checkpoint().best_moves());
    *r->job.mutable_progress() = std::move(progress);
  }
}

void JobManager::Checkpoint(const Worker& w, const v1::JobCheckpoint& m) {
  JobRecord* r = scheduler_.Assigned(w, m.job_id(), m.attempt());
  if (r == nullptr) return;
  const v1::Checkpoint& incoming = m.checkpoint();
  v1::Checkpoint& stored = *r->job.mutable_checkpoint();
  // Stored before the worker could be lost again. How far IDA* got is
  // seen by watchers in the progress that follows, so it is no event of
  // its own; a shorter answer or a higher bound is.
  const bool further = MergeThreshold(incoming, &stored);
  const Improvement improved = MergeBest(incoming, &stored);
  if (further || improved.any()) lifecycle_.Record(*r);
  if (!improved.any()) return;
  v1::Progress* progress = r->job.mutable_progress();
  progress->set_best_length(static_cast<int32_t>(stored.best_moves().size()));
  progress->set_lower_bound(stored.lower_bound());
  progress->set_best_moves(stored.best_moves());
  v1::Progress event = *progress;
  if (!improved.shorter) event.clear_best_moves();
  events_.Progress(r->job.id(), event);
}

void JobManager::Disconnected(WorkerLink* link) {
  Locked lock(this);
  scheduler_.Lost(link);
  Dispatch();
}

// --- lifecycle ---

void JobManager::Housekeeping() {
  constexpr absl::Duration kTick = absl::Milliseconds(100);
  for (;;) {
    Locked lock(this);
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), kTick);
    if (stopping_) return;
    const absl::Time now = absl::Now();
    for (WorkerLink* link : workers_.SilentSince(now - options_.lease_timeout)) {
      Later([l = workers_.Find(link)->link] { l->Close("lease expired: no word from the worker"); });
      scheduler_.Lost(link);
    }
    splits_.EndLate(now);
    for (auto& [id, done] : events_.Expired(now)) {
      if (const JobRecord* r = lifecycle_.Find(id)) Later([done = std::move(done), job = r->job] { done(job); });
    }
    Dispatch();
  }
}

void JobManager::Drain(absl::Duration grace) {
  {
    Locked lock(this);
    accepting_ = false;
    // Hand out nothing more; wait for what runs.
    for (WorkerLink* link : workers_.Links()) workers_.SetDraining(*workers_.Find(link), true);
    HandOff();
    mu_.AwaitWithDeadline(
        absl::Condition(
            +[](WorkerPool* pool) ABSL_NO_THREAD_SAFETY_ANALYSIS { return !pool->AnyRunning(); }, &workers_),
        absl::Now() + grace);
    for (WorkerLink* link : workers_.Links()) {
      // Its jobs stay recorded as running under this worker and attempt, as
      // after a crash: the next coordinator gives their worker the recovery
      // grace to reconnect and keep them before anyone else may take them.
      Later([l = workers_.Find(link)->link] { l->Close("the coordinator is shutting down"); });
      workers_.Remove(link);
    }
    stopping_ = true;
  }
  Sync();
}

ManagerCounts JobManager::Counts() {
  absl::MutexLock lock(&mu_);
  return ManagerCounts{.queued = static_cast<int64_t>(lifecycle_.queue().size()),
                       .running = workers_.running(),
                       .split_workers_wanted = splits_.WorkersWanted(),
                       .workers = static_cast<int64_t>(workers_.size()),
                       .free_slots = workers_.free_slots()};
}

absl::Status JobManager::CheckInvariants() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> problems;
  if (lifecycle_.refused() > 0) {
    problems.push_back(absl::StrCat(lifecycle_.refused(), " changes were refused by the transition table"));
  }
  int64_t leases = 0;
  std::map<std::string, int64_t> leases_by_tenant;
  workers_.ForEach([&](const Worker& w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    splits_.CheckLeases(w, &problems);
    for (const LeaseKey& lease : w.running) {
      ++leases;
      const JobRecord* r = lifecycle_.Find(lease.job_id);
      if (r != nullptr) ++leases_by_tenant[r->job.tenant()];
      if (lease.is_unit()) continue;
      if (r == nullptr) {
        problems.push_back(absl::StrCat(w.id, " holds a lease on ", lease.job_id, ", which is not unfinished"));
      } else if (r->job.state() != v1::JOB_STATE_RUNNING || r->job.worker_id() != w.id || r->ending() ||
                 lifecycle_.queue().Contains(lease.job_id)) {
        problems.push_back(absl::StrCat(w.id, " holds a lease on ", lease.job_id, ", which is ",
                                        JobStateName(r->job.state()), " on ", r->job.worker_id(),
                                        r->ending() ? ", ending" : "",
                                        lifecycle_.queue().Contains(lease.job_id) ? ", queued" : ""));
      }
    }
  });
  if (leases != workers_.running()) problems.push_back("the pool's count of leases is wrong");
  for (const auto& [tenant, count] : leases_by_tenant) {
    if (workers_.LeasesOf(tenant) != count) problems.push_back("the pool's count of leases of " + tenant + " is wrong");
  }
  splits_.CheckUnits(&problems);
  int64_t queued = 0;
  lifecycle_.ForEach([&](const JobRecord& r) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    const std::string& id = r.job.id();
    if (r.ending()) return;
    const bool in_queue = lifecycle_.queue().Contains(id);
    queued += in_queue;
    if (r.job.state() == v1::JOB_STATE_QUEUED && !in_queue) problems.push_back(id + " is queued but not in the queue");
    if (r.job.state() == v1::JOB_STATE_RUNNING && !r.split) {
      const Worker* w = workers_.FindById(r.job.worker_id());
      if (w == nullptr || !w->running.contains({id})) problems.push_back(id + " is running without a lease");
    }
    if (IsFinal(r.job.state()))
      problems.push_back(absl::StrCat(id, " is unfinished in state ", JobStateName(r.job.state())));
  });
  if (queued != static_cast<int64_t>(lifecycle_.queue().size())) {
    problems.push_back("the queue holds jobs that are not unfinished");
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrJoin(problems, "; "));
}

std::vector<TenantGauges> JobManager::TenantSamples() {
  if (!options_.metrics_per_tenant) return {};
  absl::MutexLock lock(&mu_);
  std::map<std::string, TenantGauges> by_tenant;
  for (const auto& [tenant, queued] : lifecycle_.queue().QueuedByTenant()) {
    by_tenant[tenant].queued = static_cast<double>(queued);
  }
  for (const auto& [tenant, running] : workers_.LeasesByTenant()) {
    by_tenant[tenant].running = static_cast<double>(running);
  }
  std::vector<TenantGauges> samples;
  for (auto& [tenant, gauges] : by_tenant) {
    gauges.tenant = tenant;
    samples.push_back(gauges);
  }
  return samples;
}

std::vector<WorkerGauges> JobManager::WorkerSamples() {
  absl::MutexLock lock(&mu_);
  std::vector<WorkerGauges> samples;
  workers_.ForEach([&](const Worker& w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    double rate = 0;
    for (const LeaseKey& lease : w.running) {
      if (lease.is_unit()) {
        rate += splits_.UnitRate(lease);
      } else if (const JobRecord* r = lifecycle_.Find(lease.job_id)) {
        rate += r->node_rate;
      }
    }
    samples.push_back({.id = w.id,
                       .free_slots = static_cast<double>(w.free_slots()),
                       .running = static_cast<double>(w.running.size()),
                       .node_rate = rate});
  });
  return samples;
}

}  // namespace npuzzle
