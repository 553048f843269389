#include "service/job_manager.h"

#include <utility>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engine/solvability.h"
#include "jobspec/job_spec.h"
#include "jobspec/spec_bounds.h"
#include "service/job_messages.h"

namespace npuzzle {
namespace {

// How long Cancel waits for a queued job's cancellation to be stored.
constexpr absl::Duration kStoreWait = absl::Seconds(10);

std::string NewJobId() {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* gen = new absl::BitGen;
  absl::MutexLock lock(&mu);
  return absl::StrFormat("job-%016x", absl::Uniform<uint64_t>(*gen));
}

}  // namespace

JobManager::JobManager(JobStore* store, ManagerOptions options)
    : store_(store),
      options_(std::move(options)),
      metrics_({.jobs_by_state = [store] { return store->CountByState(); },
                .counts = [this] { return Counts(); },
                .workers = [this] { return WorkerSamples(); },
                .tenants = [this] { return TenantSamples(); }}),
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

void JobManager::Store(const v1::Job& job, int64_t seq, StoreWriter::Done done) {
  writes_.push_back({{job, seq},
                     [this, id = job.id(), attempt = job.attempt(), done = std::move(done)](const absl::Status& stored)
                         ABSL_NO_THREAD_SAFETY_ANALYSIS {
                           if (auto it = active_.find(id); stored.ok() && it != active_.end()) {
                             it->second.durable_attempt = attempt;
                           }
                           if (done) done(stored);
                         }});
}

void JobManager::StoreState(const Active& a) {
  Store(a.job, 0, [this, job = a.job](const absl::Status& stored) {
    if (stored.ok()) events_.State(job);
  });
}

void JobManager::HandOff() {
  if (writes_.empty()) return;
  writer_.Append(std::move(writes_));
  writes_.clear();
}

void JobManager::Unlock() {
  HandOff();
  std::vector<std::function<void()>> later;
  later.swap(later_);
  mu_.Unlock();
  for (auto& f : later) f();
}

void JobManager::Committed(std::vector<StoreWriter::Done>& done, const std::vector<absl::Status>& outcomes) {
  metrics_.Committed(done.size());
  Locked lock(this);
  for (size_t i = 0; i < done.size(); ++i) {
    if (done[i]) done[i](outcomes[i]);
  }
}

void JobManager::Sync() { writer_.WaitIdle(); }

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
    const absl::Time resume = absl::Now() + options_.recovery_grace;
    for (JobStore::Row& row : *rows) {
      Active& a = active_[row.job.id()];
      a.job = std::move(row.job);
      a.seq = row.seq;
      a.durable_attempt = a.job.attempt();
      // The last coordinator may have sent the next attempt before storing
      // it (see Assign): that number is never used again.
      a.min_attempt = a.job.attempt() + 2;
      absl::Time not_before = absl::InfinitePast();
      if (a.job.state() == v1::JOB_STATE_RUNNING) {
        // Its worker may still be at it: give it time to reconnect.
        a.job.set_state(v1::JOB_STATE_QUEUED);
        a.unclaimed = true;
        not_before = resume;
        Store(a.job, 0, [&failed](const absl::Status& stored) {
          if (!stored.ok()) failed = stored;
        });
      }
      queue_.Push(a.job, a.seq, not_before);
    }
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
  if (!submitted.request_id().empty()) {
    absl::StatusOr<v1::Job> known = store_->FindByRequestId(tenant, submitted.request_id());
    if (known.ok()) return reply(Resubmitted(submitted, *known));
    if (!absl::IsNotFound(known.status())) return reply(known.status());
  }
  v1::JobSpec spec = submitted;
  if (absl::Status s = options_.limits.Apply(spec); !s.ok()) return reply(s);
  absl::StatusOr<SolveRequest> request = RequestFromSpec(spec);
  if (!request.ok()) return reply(request.status());
  WarmSplit(spec);

  v1::Job job;
  job.set_id(NewJobId());
  job.set_tenant(tenant);
  *job.mutable_spec() = spec;
  *job.mutable_start() = BoardToProto(request->start);
  *job.mutable_goal() = BoardToProto(request->goal);
  const absl::Time now = absl::Now();
  SetTime(job.mutable_create_time(), now);
  const bool solvable = IsSolvable(request->start, request->goal);
  if (solvable) {
    job.set_state(v1::JOB_STATE_QUEUED);
  } else {
    // Decided here, without a search; no worker ever sees it.
    job.set_state(v1::JOB_STATE_DONE);
    SetTime(job.mutable_finish_time(), now);
    SolveResult unsolvable;
    unsolvable.status = SearchStatus::kUnsolvable;
    unsolvable.algorithm = request->algorithm;
    unsolvable.heuristic = request->heuristic;
    *job.mutable_result() = ResultToProto(unsolvable);
  }

  Locked lock(this);
  absl::Status refused;
  if (!accepting_) {
    refused = absl::UnavailableError("the service is shutting down and takes no new jobs");
  } else if (solvable && queue_.size() >= options_.max_queued) {
    refused = absl::ResourceExhaustedError(
        absl::StrFormat("the queue is full (%d jobs waiting); try again later", queue_.size()));
  } else if (const int64_t max_queued = QuotaOf(tenant).max_queued;
             solvable && max_queued > 0 && static_cast<int64_t>(queue_.QueuedOf(tenant)) >= max_queued) {
    refused = absl::ResourceExhaustedError(
        absl::StrFormat("tenant '%s' has %d jobs queued, its max_queued quota; submit more once some have started",
                        tenant, queue_.QueuedOf(tenant)));
  }
  if (!refused.ok()) return Later([reply, refused] { reply(refused); });
  Active& a = active_[job.id()];
  a.job = job;
  a.seq = ++last_seq_;
  if (!solvable) a.final_job = job;
  Store(job, a.seq,
        [this, id = job.id(), submitted, tenant, reply](const absl::Status& stored)
            ABSL_NO_THREAD_SAFETY_ANALYSIS { Admitted(id, tenant, submitted, reply, stored); });
  if (solvable) {
    queue_.Push(job, a.seq);
    Dispatch();
  }
}

void JobManager::Admitted(const std::string& id, const std::string& tenant, const v1::JobSpec& submitted,
                          const Reply& reply, const absl::Status& stored) {
  if (!stored.ok()) {
    Forget(id);
    if (absl::IsAlreadyExists(stored) && !submitted.request_id().empty()) {
      // A concurrent submission with the same request id was stored first.
      Later([this, tenant, submitted, reply, stored] {
        absl::StatusOr<v1::Job> known = store_->FindByRequestId(tenant, submitted.request_id());
        reply(known.ok() ? Resubmitted(submitted, *known) : absl::StatusOr<v1::Job>(stored));
      });
    } else {
      Later([reply, stored] { reply(stored); });
    }
    return;
  }
  metrics_.Submitted();
  auto it = active_.find(id);
  if (it == active_.end()) return;
  Active& a = it->second;
  // An unsolvable job was stored final: it is done now. (A solvable one
  // may be finishing too, its result not yet stored: it is reported as
  // it stands.)
  const bool stored_final =
      a.final_job && a.job.state() != v1::JOB_STATE_QUEUED && a.job.state() != v1::JOB_STATE_RUNNING;
  const v1::Job now = stored_final ? *a.final_job : a.job;
  if (stored_final) FinalStored(id, stored);
  Later([reply, now] { reply(now); });
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

absl::StatusOr<v1::Job> JobManager::Resubmitted(const v1::JobSpec& submitted, const v1::Job& known) {
  if (!SameRequest(submitted, known.spec())) {
    return absl::AlreadyExistsError(absl::StrCat("request_id '", submitted.request_id(), "' already names job ",
                                                 known.id(), ", which has a different spec"));
  }
  // The job it created, as it is now.
  absl::MutexLock lock(&mu_);
  if (auto it = active_.find(known.id()); it != active_.end()) return it->second.job;
  return known;
}

absl::StatusOr<v1::Job> JobManager::Get(const std::string& id, const std::string& tenant) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  std::optional<v1::Job> active;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = active_.find(id); it != active_.end()) active = it->second.job;
  }
  absl::StatusOr<v1::Job> job = active ? *std::move(active) : store_->Get(id);
  if (job.ok() && job->tenant() != tenant) return JobStore::NoSuchJob(id);
  return job;
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
    if (auto it = active_.find(id); it != active_.end()) {
      Active& a = it->second;
      unfinished = true;
      if (!a.final_job && a.job.state() == v1::JOB_STATE_QUEUED) {
        v1::Result result;
        result.set_status("cancelled");
        Finish(a, v1::JOB_STATE_CANCELLED, &result, "");
      } else if (!a.final_job && a.split) {
        v1::Result result = a.split->Result("cancelled", absl::Now());
        Finish(a, v1::JOB_STATE_CANCELLED, &result, "");
      } else if (!a.final_job) {
        a.cancel_requested = true;
        if (Worker* w = workers_.FindById(a.job.worker_id()); w != nullptr && w->running.contains(id)) {
          w->link->Send(CancelMessage(id, a.job.attempt()));
        }
      }
      reply = a.job;
      ending = a.final_job.has_value();
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
        absl::StrCat("job ", id, " has already finished (", v1::JobState_Name(job->state()), ")"));
  }
  if (ending) stored.WaitForNotification();
  return reply;
}

absl::Status JobManager::WhenFinished(const std::string& id, absl::Duration timeout,
                                      std::function<void(const v1::Job&)> done) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  {
    Locked lock(this);
    if (active_.contains(id)) {
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
    if (auto it = active_.find(id); it != active_.end()) {
      if (it->second.job.tenant() != tenant) return JobStore::NoSuchJob(id);
      events_.Watch(it->second.job, watch);
      return watch;
    }
  }
  absl::StatusOr<v1::Job> stored = store_->Get(id);
  if (!stored.ok()) return stored.status();
  if (stored->tenant() != tenant) return JobStore::NoSuchJob(id);
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
    if (auto it = active_.find(job.id()); it != active_.end() && it->second.job.state() == job.state()) {
      job = it->second.job;
    }
  }
  return page;
}

// --- workers ---

JobManager::Active* JobManager::Assigned(const Worker& w, const std::string& job_id, int attempt) {
  auto it = active_.find(job_id);
  if (it == active_.end()) return nullptr;
  Active& a = it->second;
  const bool ours = !a.final_job && a.job.state() == v1::JOB_STATE_RUNNING && a.job.worker_id() == w.id &&
                    a.job.attempt() == attempt && w.running.contains(job_id);
  return ours ? &a : nullptr;
}

bool JobManager::Holds(const Worker& w, const std::string& key, int attempt) {
  if (std::optional<UnitName> unit = ParseUnitKey(key)) {
    Active* a = SplitOf(*unit, attempt);
    return a != nullptr && a->split->Leased(unit->unit, w.id);
  }
  return Assigned(w, key, attempt) != nullptr;
}

void JobManager::Connected(std::shared_ptr<WorkerLink> link, const v1::WorkerHello& hello) {
  Locked lock(this);
  // A worker that reconnects before its old link was noticed gone.
  if (Worker* old = workers_.FindById(hello.worker_id())) {
    Later([stale = old->link] { stale->Close("replaced by a new connection from the same worker"); });
    DropWorker(old->link.get());
  }
  Worker& w = workers_.Add(link, hello.worker_id(), hello.capacity(), absl::Now());
  for (const v1::JobFinished& f : hello.finished()) HandleFinished(w, f);
  for (const v1::RunningJob& r : hello.running()) {
    auto it = active_.find(r.job_id());
    const bool adopt = it != active_.end() && !it->second.final_job && it->second.job.state() == v1::JOB_STATE_QUEUED &&
                       it->second.job.attempt() == r.attempt() && it->second.job.worker_id() == w.id &&
                       !it->second.cancel_requested;
    if (adopt) {
      // Still running where it was: keep it there rather than start over.
      queue_.Erase(r.job_id());
      it->second.unclaimed = false;
      Assign(it->second, w, /*adopted=*/true);
    } else {
      link->Send(CancelMessage(r.job_id(), r.attempt()));
    }
  }
  Dispatch();
}

void JobManager::Received(WorkerLink* link, const v1::WorkerMessage& m) {
  Locked lock(this);
  Worker* w = workers_.Find(link);
  if (w == nullptr) return;
  workers_.Heard(*w, absl::Now());
  switch (m.message_case()) {
    case v1::WorkerMessage::kHeartbeat:
      for (const v1::RunningJob& r : m.heartbeat().running()) {
        if (!Holds(*w, r.job_id(), r.attempt())) w->link->Send(CancelMessage(r.job_id(), r.attempt()));
      }
      break;
    case v1::WorkerMessage::kProgress:
      if (std::optional<UnitName> unit = ParseUnitKey(m.progress().job_id())) {
        UnitProgress(*w, *unit, m.progress().attempt(), m.progress().progress());
      } else if (Active* a = Assigned(*w, m.progress().job_id(), m.progress().attempt())) {
        *a->job.mutable_progress() = m.progress().progress();
        a->node_rate = m.progress().progress().nodes_per_second();
        events_.Progress(a->job.id(), m.progress().progress());
      }
      break;
    case v1::WorkerMessage::kCheckpoint:
      if (Active* a = Assigned(*w, m.checkpoint().job_id(), m.checkpoint().attempt())) {
        // Durable before the worker could be lost again; watchers see the
        // threshold in progress, so this is no event of its own.
        const v1::Checkpoint& c = m.checkpoint().checkpoint();
        if (c.bound() > a->job.checkpoint().bound()) {
          *a->job.mutable_checkpoint() = c;
          Store(a->job, 0, [](const absl::Status&) {});
        }
      }
      break;
    case v1::WorkerMessage::kFinished:
      HandleFinished(*w, m.finished());
      break;
    case v1::WorkerMessage::kHandedBack:
      if (std::optional<UnitName> unit = ParseUnitKey(m.handed_back().job_id())) UnitHandedBack(*unit, m.handed_back());
      break;
    case v1::WorkerMessage::kReleased:
      if (std::optional<UnitName> unit = ParseUnitKey(m.released().job_id())) {
        if (Holds(*w, m.released().job_id(), m.released().attempt())) {
          workers_.Release(*w, m.released().job_id());
          ReturnUnit(*unit);
        }
      } else if (Active* a = Assigned(*w, m.released().job_id(), m.released().attempt())) {
        workers_.Release(*w, a->job.id());
        Requeue(*a, /*lost=*/false);
      }
      break;
    case v1::WorkerMessage::kDraining:
      workers_.SetDraining(*w, m.draining());
      break;
    default:
      break;
  }
  Dispatch();
}

void JobManager::HandleFinished(Worker& w, const v1::JobFinished& f) {
  if (std::optional<UnitName> unit = ParseUnitKey(f.job_id())) return UnitFinished(w, *unit, f);
  auto it = active_.find(f.job_id());
  if (it == active_.end() || it->second.final_job) return;  // already final: a repeat
  Active& a = it->second;
  // Only the attempt the job is on counts, and only from its own worker;
  // that is what keeps one final result per job.
  const bool current = a.job.attempt() == f.attempt() && a.job.worker_id() == w.id &&
                       (a.job.state() == v1::JOB_STATE_QUEUED || w.running.contains(a.job.id()));
  if (!current) return;
  workers_.Release(w, a.job.id());
  queue_.Erase(a.job.id());
  if (!f.error().empty()) {
    Finish(a, v1::JOB_STATE_FAILED, nullptr, f.error());
  } else if (f.result().status() == "cancelled") {
    if (a.cancel_requested) {
      Finish(a, v1::JOB_STATE_CANCELLED, &f.result(), "");
    } else {
      Requeue(a, /*lost=*/false);  // stopped by its worker, not by a client
    }
  } else {
    Finish(a, v1::JOB_STATE_DONE, &f.result(), "");
  }
}

void JobManager::Disconnected(WorkerLink* link) {
  Locked lock(this);
  DropWorker(link);
  Dispatch();
}

void JobManager::DropWorker(WorkerLink* link) {
  for (const std::string& id : workers_.Remove(link)) {
    if (std::optional<UnitName> unit = ParseUnitKey(id)) {
      ReturnUnit(*unit);
    } else if (auto a = active_.find(id); a != active_.end()) {
      Requeue(a->second, /*lost=*/true);
    }
  }
}

// --- state changes ---

TenantQuota JobManager::QuotaOf(const std::string& tenant) const {
  return options_.quota_of ? options_.quota_of(tenant) : TenantQuota{};
}

void JobManager::Dispatch() {
  if (stopping_) return;
  const absl::Time now = absl::Now();
  while (Worker* w = workers_.Freest()) {
    // Units of running split jobs before queued jobs of no higher
    // priority: those jobs were admitted first, or matter more.
    if (LeaseUnit(*w, queue_.TopPriority())) continue;
    std::optional<std::string> id = queue_.PopReady(now, [this](const std::string& tenant) {
      mu_.AssertHeld();
      const int64_t max_running = QuotaOf(tenant).max_running;
      return max_running == 0 || workers_.LeasesOf(tenant) < max_running;
    });
    if (!id) {
      // Nothing queued may run now: a split job's unit of any priority may.
      if (LeaseUnit(*w, std::nullopt)) continue;
      return;
    }
    auto it = active_.find(*id);
    if (it == active_.end()) continue;
    Active& a = it->second;
    if (SplitsOverWorkers(a.job.spec())) {
      // It was running on no one worker, so none was lost with it.
      a.unclaimed = false;
      StartSplit(a);
      continue;
    }
    // Running before a restart, and its worker did not come back for it in
    // the recovery grace: that worker was lost.
    if (std::exchange(a.unclaimed, false) && !CountLoss(a)) continue;
    Assign(a, *w, /*adopted=*/false);
  }
}

// An assignment goes to its worker at once when its attempt number is one
// past the job's last durable one, so that the search overlaps the commit;
// otherwise once it is stored. Were the coordinator to crash before the
// commit, its successor starts each job at two past the stored number, so
// no attempt number is ever given twice: at most one attempt is ever
// ahead of the disk, and that one is skipped.
void JobManager::Assign(Active& a, Worker& w, bool adopted) {
  a.job.set_state(v1::JOB_STATE_RUNNING);
  if (!adopted) {
    a.job.set_attempt(std::max(a.job.attempt() + 1, a.min_attempt));
    a.job.set_worker_id(w.id);
    a.job.clear_progress();
    a.node_rate = 0;
    SetTime(a.job.mutable_start_time(), absl::Now());
  }
  workers_.Assign(w, a.job.id(), a.job.tenant());
  const bool early = !adopted && a.job.attempt() == a.durable_attempt + 1;
  if (early) SendAssignment(a, w);
  Store(a.job, 0,
        [this, id = a.job.id(), attempt = a.job.attempt(), adopted, early](const absl::Status& stored)
            ABSL_NO_THREAD_SAFETY_ANALYSIS { AssignmentStored(id, attempt, adopted, early, stored); });
}

void JobManager::SendAssignment(const Active& a, Worker& w) {
  metrics_.Attempt();
  v1::CoordinatorMessage m;
  v1::Assignment* assign = m.mutable_assign();
  assign->set_job_id(a.job.id());
  assign->set_attempt(a.job.attempt());
  *assign->mutable_spec() = a.job.spec();
  if (a.job.has_checkpoint()) *assign->mutable_checkpoint() = a.job.checkpoint();
  w.link->Send(m);
}

void JobManager::AssignmentStored(const std::string& id, int attempt, bool adopted, bool sent,
                                  const absl::Status& stored) {
  auto it = active_.find(id);
  if (it == active_.end()) return;
  Active& a = it->second;
  Worker* w = workers_.FindById(a.job.worker_id());
  // Its worker may have gone, or the job moved on, while this was stored;
  // the writes that followed speak for it then.
  if (w == nullptr || Assigned(*w, id, attempt) == nullptr) return;
  if (!stored.ok()) {
    // A job does not stay out without the store knowing: take it back.
    workers_.Release(*w, id);
    w->link->Send(CancelMessage(id, attempt));
    a.job.set_state(v1::JOB_STATE_QUEUED);
    queue_.Push(a.job, a.seq);
    return;
  }
  if (a.cancel_requested && !adopted && !sent) {
    // Cancelled before its worker heard of it.
    workers_.Release(*w, id);
    v1::Result result;
    result.set_status("cancelled");
    Finish(a, v1::JOB_STATE_CANCELLED, &result, "");
    return;
  }
  events_.State(a.job);
  if (!adopted && !sent) SendAssignment(a, *w);
}

void JobManager::Requeue(Active& a, bool lost) {
  if (a.cancel_requested) {
    v1::Result result;
    result.set_status("cancelled");
    Finish(a, v1::JOB_STATE_CANCELLED, &result, "");
    return;
  }
  if (lost && !CountLoss(a)) return;
  a.job.set_state(v1::JOB_STATE_QUEUED);
  a.job.clear_progress();
  a.node_rate = 0;
  metrics_.Requeued(lost);
  // If this write fails, a restart finds the job running and requeues it.
  StoreState(a);
  queue_.Push(a.job, a.seq);
}

bool JobManager::CountLoss(Active& a) {
  a.job.set_lost_attempts(a.job.lost_attempts() + 1);
  if (a.job.lost_attempts() < options_.max_lost_attempts) return true;
  Finish(a, v1::JOB_STATE_FAILED, nullptr,
         absl::StrFormat("the workers running this job were lost %d times (last: %s)", a.job.lost_attempts(),
                         a.job.worker_id()));
  return false;
}

void JobManager::Finish(Active& a, v1::JobState state, const v1::Result* result, const std::string& error) {
  if (a.split) {
    for (const auto& [unit, worker] : a.split->Out()) StopUnit(worker, UnitKey(a.job.id(), unit), a.job.attempt());
    splitting_.erase(a.job.id());
    a.split.reset();
  }
  v1::Job job = a.job;
  job.set_state(state);
  job.clear_progress();
  if (result != nullptr) *job.mutable_result() = *result;
  if (!error.empty()) job.set_error(error);
  SetTime(job.mutable_finish_time(), absl::Now());
  queue_.Erase(job.id());
  a.final_job = job;
  Store(job, 0,
        [this, id = job.id()](const absl::Status& stored) ABSL_NO_THREAD_SAFETY_ANALYSIS { FinalStored(id, stored); });
}

void JobManager::FinalStored(const std::string& id, const absl::Status& stored) {
  auto it = active_.find(id);
  if (it == active_.end() || !it->second.final_job) return;
  Active& a = it->second;
  if (!stored.ok()) {
    // Not stored, so not final: run it again rather than report a result
    // a restart could lose.
    a.final_job.reset();
    a.job.set_state(v1::JOB_STATE_QUEUED);
    a.job.clear_progress();
    queue_.Push(a.job, a.seq);
    return;
  }
  metrics_.Finished(*a.final_job);
  for (std::function<void()>& call : events_.Final(*a.final_job)) Later(std::move(call));
  active_.erase(it);
}

void JobManager::Forget(const std::string& id) {
  auto it = active_.find(id);
  if (it == active_.end()) return;
  queue_.Erase(id);
  const Active& a = it->second;
  // Its assignment may have gone out ahead of the commit that failed.
  if (Worker* w = workers_.FindById(a.job.worker_id()); w != nullptr && workers_.Release(*w, id)) {
    w->link->Send(CancelMessage(id, a.job.attempt()));
  }
  active_.erase(it);
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
      DropWorker(link);
    }
    EndLateSplits(now);
    for (auto& [id, done] : events_.Expired(now)) {
      auto it = active_.find(id);
      if (it != active_.end()) Later([done = std::move(done), job = it->second.job] { done(job); });
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
  int64_t wanted = 0;
  for (const std::string& id : splitting_) {
    if (auto a = active_.find(id); a != active_.end() && a->second.split) {
      wanted += static_cast<int64_t>(a->second.split->WorkersWanted());
    }
  }
  return ManagerCounts{.queued = static_cast<int64_t>(queue_.size()),
                       .running = workers_.running(),
                       .split_workers_wanted = wanted,
                       .workers = static_cast<int64_t>(workers_.size()),
                       .free_slots = workers_.free_slots()};
}

absl::Status JobManager::CheckInvariants() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> problems;
  int64_t leases = 0;
  absl::flat_hash_map<std::string, int64_t> leases_by_tenant;
  workers_.ForEach([&](const Worker& w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (const std::string& id : w.running) {
      ++leases;
      if (std::optional<UnitName> unit = ParseUnitKey(id)) {
        auto it = active_.find(unit->job_id);
        if (it == active_.end() || it->second.final_job || !it->second.split ||
            !it->second.split->Leased(unit->unit, w.id)) {
          problems.push_back(absl::StrCat(w.id, " holds a lease on ", id, ", which is no unit of its out"));
        } else {
          ++leases_by_tenant[it->second.job.tenant()];
        }
        continue;
      }
      auto it = active_.find(id);
      if (it != active_.end()) ++leases_by_tenant[it->second.job.tenant()];
      if (it == active_.end()) {
        problems.push_back(absl::StrCat(w.id, " holds a lease on ", id, ", which is not unfinished"));
      } else if (it->second.job.state() != v1::JOB_STATE_RUNNING || it->second.job.worker_id() != w.id ||
                 it->second.final_job || queue_.Contains(id)) {
        problems.push_back(absl::StrCat(w.id, " holds a lease on ", id, ", which is ",
                                        v1::JobState_Name(it->second.job.state()), " on ", it->second.job.worker_id(),
                                        it->second.final_job ? ", finishing" : "",
                                        queue_.Contains(id) ? ", queued" : ""));
      }
    }
  });
  if (leases != workers_.running()) problems.push_back("the pool's count of leases is wrong");
  for (const auto& [tenant, count] : leases_by_tenant) {
    if (workers_.LeasesOf(tenant) != count) problems.push_back("the pool's count of leases of " + tenant + " is wrong");
  }
  int64_t queued = 0;
  for (const auto& [id, a] : active_) {
    if (a.final_job) continue;
    const bool in_queue = queue_.Contains(id);
    queued += in_queue;
    if (a.job.state() == v1::JOB_STATE_QUEUED && !in_queue) problems.push_back(id + " is queued but not in the queue");
    if (a.split && !splitting_.contains(id)) problems.push_back(id + " is split but not among the split jobs");
    if (a.split) {
      for (const auto& [unit, worker] : a.split->Out()) {
        Worker* w = workers_.FindById(worker);
        if (w == nullptr || !w->running.contains(UnitKey(id, unit))) {
          problems.push_back(absl::StrCat(id, "'s unit ", unit, " is out without a lease"));
        }
      }
    }
    if (a.job.state() == v1::JOB_STATE_RUNNING && !a.split) {
      Worker* w = workers_.FindById(a.job.worker_id());
      if (w == nullptr || !w->running.contains(id)) problems.push_back(id + " is running without a lease");
    }
    if (a.job.state() != v1::JOB_STATE_QUEUED && a.job.state() != v1::JOB_STATE_RUNNING) {
      problems.push_back(absl::StrCat(id, " is unfinished in state ", v1::JobState_Name(a.job.state())));
    }
  }
  if (queued != static_cast<int64_t>(queue_.size())) problems.push_back("the queue holds jobs that are not unfinished");
  if (problems.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrJoin(problems, "; "));
}

std::vector<TenantGauges> JobManager::TenantSamples() {
  absl::MutexLock lock(&mu_);
  std::map<std::string, TenantGauges> by_tenant;
  for (const auto& [tenant, queued] : queue_.QueuedByTenant()) by_tenant[tenant].queued = static_cast<double>(queued);
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
    for (const std::string& key : w.running) {
      if (const std::optional<UnitName> unit = ParseUnitKey(key)) {
        auto a = active_.find(unit->job_id);
        if (a != active_.end() && a->second.split) rate += a->second.split->UnitRate(unit->unit);
      } else if (auto a = active_.find(key); a != active_.end()) {
        rate += a->second.node_rate;
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
