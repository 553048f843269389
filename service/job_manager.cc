#include "service/job_manager.h"

#include <random>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "engine/solvability.h"
#include "google/protobuf/util/message_differencer.h"
#include "service/input_bounds.h"
#include "worker/job_spec.h"

namespace npuzzle {
namespace {

void SetTime(google::protobuf::Timestamp* t, absl::Time when) {
  const int64_t nanos = absl::ToUnixNanos(when);
  t->set_seconds(nanos / 1000000000);
  t->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

absl::Time TimeOf(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

std::string NewJobId() {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* gen = new absl::BitGen;
  absl::MutexLock lock(&mu);
  return absl::StrFormat("job-%016x", absl::Uniform<uint64_t>(*gen));
}

// Fills unset limits from the defaults and refuses any above a ceiling.
absl::Status ApplyLimits(const ManagerOptions& o, v1::JobSpec& spec) {
  v1::Limits* l = spec.mutable_limits();
  const v1::Limits& d = o.default_limits;
  const v1::Limits& c = o.ceiling_limits;
  if (l->max_nodes() == 0) l->set_max_nodes(d.max_nodes());
  if (l->max_time_ms() == 0) l->set_max_time_ms(d.max_time_ms());
  if (l->max_memory_mb() == 0) l->set_max_memory_mb(d.max_memory_mb());
  struct Check {
    const char* name;
    uint64_t value, ceiling;
  };
  for (const Check& k :
       {Check{"max_nodes", l->max_nodes(), c.max_nodes()}, Check{"max_time_ms", l->max_time_ms(), c.max_time_ms()},
        Check{"max_memory_mb", l->max_memory_mb(), c.max_memory_mb()}}) {
    if (k.ceiling != 0 && (k.value == 0 || k.value > k.ceiling)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("limits.%s %s exceeds this service's ceiling of %d", k.name,
                          k.value == 0 ? std::string("(unlimited)") : absl::StrCat(k.value), k.ceiling));
    }
  }
  if (spec.threads() > o.max_threads) {
    return absl::InvalidArgumentError(
        absl::StrFormat("threads %d exceeds this service's ceiling of %d", spec.threads(), o.max_threads));
  }
  return absl::OkStatus();
}

// Whether a resubmission asks for the job `stored` is: the same spec, where
// limits the client left unset match whatever defaults were filled in.
bool SameRequest(v1::JobSpec submitted, v1::JobSpec stored) {
  // mutable_limits() on both: an absent Limits and an empty one are equal.
  v1::Limits* l = stored.mutable_limits();
  const v1::Limits& asked = *submitted.mutable_limits();
  if (asked.max_nodes() == 0) l->set_max_nodes(0);
  if (asked.max_time_ms() == 0) l->set_max_time_ms(0);
  if (asked.max_memory_mb() == 0) l->set_max_memory_mb(0);
  return google::protobuf::util::MessageDifferencer::Equals(submitted, stored);
}

v1::JobEvent StateEvent(const v1::Job& job) {
  v1::JobEvent e;
  *e.mutable_state() = job;
  return e;
}

}  // namespace

JobManager::JobManager(JobStore* store, ManagerOptions options) : store_(store), options_(std::move(options)) {
  RegisterMetrics();
}

void JobManager::RegisterMetrics() {
  MetricsRegistry& m = metrics_;
  const std::string finished = "npuzzle_jobs_finished_total";
  const std::string finished_help = "jobs that reached a final state, by that state";
  const std::string requeues = "npuzzle_job_requeues_total";
  const std::string requeues_help = "running jobs put back in the queue, by reason";
  instruments_ = Instruments{
      .submitted = m.AddCounter("npuzzle_jobs_submitted_total", "jobs accepted (idempotent repeats not counted)"),
      .done = m.AddCounter(finished, finished_help, {{"state", "done"}}),
      .failed = m.AddCounter(finished, finished_help, {{"state", "failed"}}),
      .cancelled = m.AddCounter(finished, finished_help, {{"state", "cancelled"}}),
      .attempts = m.AddCounter("npuzzle_job_attempts_total", "jobs handed to a worker (each attempt counts)"),
      .requeued_lost = m.AddCounter(requeues, requeues_help, {{"reason", "worker_lost"}}),
      .requeued_released = m.AddCounter(requeues, requeues_help, {{"reason", "released"}}),
      .nodes_expanded = m.AddCounter("npuzzle_nodes_expanded_total", "states expanded by finished jobs"),
      .latency = m.AddHistogram("npuzzle_job_latency_seconds", "submit to final result, for jobs that end done",
                                ExponentialBuckets(0.001, 2, 24)),
  };
  m.AddCollectedGauge("npuzzle_jobs", "jobs in the store, by state", [this] { return JobsByState(); });
  m.AddCollectedGauge("npuzzle_queue_depth", "jobs waiting for a worker", [this] {
    return std::vector<Sample>{{{}, static_cast<double>(Counts().queued)}};
  });
  m.AddCollectedGauge("npuzzle_workers_connected", "worker processes connected", [this] {
    return std::vector<Sample>{{{}, static_cast<double>(Counts().workers)}};
  });
  m.AddCollectedGauge("npuzzle_coordinator_worker_free_slots", "jobs each worker could start now", [this] {
    return PerWorker([](const Worker& w) {
      return w.draining ? 0.0 : std::max(0.0, static_cast<double>(w.capacity) - w.running.size());
    });
  });
  m.AddCollectedGauge("npuzzle_coordinator_worker_running_jobs", "jobs each worker is running", [this] {
    return PerWorker([](const Worker& w) { return static_cast<double>(w.running.size()); });
  });
  m.AddCollectedGauge("npuzzle_coordinator_worker_node_rate", "states per second each worker's running jobs report",
                      [this] {
                        return PerWorker([this](const Worker& w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                          double rate = 0;
                          for (const std::string& id : w.running) {
                            if (auto a = active_.find(id); a != active_.end()) rate += a->second.node_rate;
                          }
                          return rate;
                        });
                      });
}

std::vector<Sample> JobManager::JobsByState() {
  absl::StatusOr<std::map<v1::JobState, int64_t>> counts = store_->CountByState();
  std::vector<Sample> samples;
  if (!counts.ok()) return samples;
  for (const auto& [state, name] : {std::pair{v1::JOB_STATE_QUEUED, "queued"},
                                    {v1::JOB_STATE_RUNNING, "running"},
                                    {v1::JOB_STATE_DONE, "done"},
                                    {v1::JOB_STATE_FAILED, "failed"},
                                    {v1::JOB_STATE_CANCELLED, "cancelled"}}) {
    const auto it = counts->find(state);
    samples.push_back({{{"state", name}}, it == counts->end() ? 0.0 : static_cast<double>(it->second)});
  }
  return samples;
}

std::vector<Sample> JobManager::PerWorker(const std::function<double(const Worker&)>& value) {
  absl::MutexLock lock(&mu_);
  std::vector<Sample> samples;
  for (const auto& [link, w] : workers_) samples.push_back({{{"worker", w.id}}, value(w)});
  return samples;
}

JobManager::~JobManager() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (housekeeper_.joinable()) housekeeper_.join();
}

void JobManager::Unlock() {
  std::vector<std::function<void()>> later;
  later.swap(later_);
  mu_.Unlock();
  for (auto& f : later) f();
}

absl::Status JobManager::Start() {
  absl::StatusOr<std::vector<JobStore::Row>> rows = store_->Unfinished();
  if (!rows.ok()) return rows.status();
  mu_.Lock();
  const absl::Time resume = absl::Now() + options_.recovery_grace;
  for (JobStore::Row& row : *rows) {
    Active& a = active_[row.job.id()];
    a.job = std::move(row.job);
    a.seq = row.seq;
    if (a.job.state() == v1::JOB_STATE_RUNNING) {
      // Its worker may still be at it: give it time to reconnect.
      a.job.set_state(v1::JOB_STATE_QUEUED);
      a.not_before = resume;
      if (absl::Status s = store_->Update(a.job); !s.ok()) {
        Unlock();
        return s;
      }
    }
    queue_.insert({-a.job.spec().priority(), a.seq, a.job.id()});
  }
  Unlock();
  housekeeper_ = std::thread([this] { Housekeeping(); });
  return absl::OkStatus();
}

absl::StatusOr<v1::Job> JobManager::Submit(const v1::JobSpec& submitted) {
  if (absl::Status s = CheckSpecBounds(submitted); !s.ok()) return s;
  // A retry gets its job even when the queue is full or the service is
  // draining: the request id is looked up before admission.
  if (!submitted.request_id().empty()) {
    absl::StatusOr<v1::Job> known = store_->FindByRequestId(submitted.request_id());
    if (known.ok()) return Resubmitted(submitted, *known);
    if (known.status().code() != absl::StatusCode::kNotFound) return known.status();
  }
  v1::JobSpec spec = submitted;
  if (absl::Status s = ApplyLimits(options_, spec); !s.ok()) return s;
  absl::StatusOr<SolveRequest> request = RequestFromSpec(spec);
  if (!request.ok()) return request.status();

  v1::Job job;
  job.set_id(NewJobId());
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

  mu_.Lock();
  if (!accepting_) {
    Unlock();
    return absl::UnavailableError("the service is shutting down and takes no new jobs");
  }
  if (solvable && queue_.size() >= options_.max_queued) {
    Unlock();
    return absl::ResourceExhaustedError(
        absl::StrFormat("the queue is full (%d jobs waiting); try again later", queue_.size()));
  }
  absl::StatusOr<JobStore::Inserted> inserted = store_->Insert(job);
  if (!inserted.ok()) {
    Unlock();
    return inserted.status();
  }
  v1::Job reply = inserted->job;
  if (inserted->added) {
    instruments_.submitted->Increment();
    if (!solvable) {
      instruments_.done->Increment();
      instruments_.latency->Observe(0);
    }
  }
  if (!inserted->added) {
    // The same request id, inserted by a concurrent submission.
    Unlock();
    return Resubmitted(submitted, reply);
  }
  if (solvable) {
    Active& a = active_[job.id()];
    a.job = job;
    a.seq = inserted->seq;
    queue_.insert({-spec.priority(), a.seq, job.id()});
    Dispatch();
    reply = active_.contains(job.id()) ? active_[job.id()].job : reply;
  }
  Unlock();
  return reply;
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

absl::StatusOr<v1::Job> JobManager::Get(const std::string& id) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = active_.find(id); it != active_.end()) return it->second.job;
  }
  return store_->Get(id);
}

absl::StatusOr<v1::Job> JobManager::Cancel(const std::string& id) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  mu_.Lock();
  auto it = active_.find(id);
  if (it == active_.end()) {
    Unlock();
    absl::StatusOr<v1::Job> stored = store_->Get(id);
    if (!stored.ok()) return stored.status();
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id, " has already finished (", v1::JobState_Name(stored->state()), ")"));
  }
  Active& a = it->second;
  v1::Job reply;
  if (a.job.state() == v1::JOB_STATE_QUEUED) {
    queue_.erase({-a.job.spec().priority(), a.seq, id});
    reply = a.job;
    v1::Result result;
    result.set_status("cancelled");
    Finish(a, v1::JOB_STATE_CANCELLED, &result, "");
    reply.set_state(v1::JOB_STATE_CANCELLED);
  } else {
    a.cancel_requested = true;
    for (auto& [link, w] : workers_) {
      if (w.running.contains(id)) {
        v1::CoordinatorMessage m;
        m.mutable_cancel()->set_job_id(id);
        m.mutable_cancel()->set_attempt(a.job.attempt());
        w.link->Send(m);
      }
    }
    reply = a.job;
  }
  Unlock();
  if (reply.state() == v1::JOB_STATE_CANCELLED) return store_->Get(id);
  return reply;
}

absl::Status JobManager::WhenFinished(const std::string& id, absl::Duration timeout,
                                      std::function<void(const v1::Job&)> done) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  mu_.Lock();
  if (auto it = active_.find(id); it != active_.end()) {
    it->second.waiters.push_back({absl::Now() + timeout, std::move(done)});
    Unlock();
    return absl::OkStatus();
  }
  Unlock();
  absl::StatusOr<v1::Job> stored = store_->Get(id);
  if (!stored.ok()) return stored.status();
  done(*stored);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<JobWatch>> JobManager::Watch(const std::string& id) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  auto watch = std::make_shared<JobWatch>();
  mu_.Lock();
  if (auto it = active_.find(id); it != active_.end()) {
    watch->Push(StateEvent(it->second.job), false);
    it->second.watchers.push_back(watch);
    Unlock();
    return watch;
  }
  Unlock();
  absl::StatusOr<v1::Job> stored = store_->Get(id);
  if (!stored.ok()) return stored.status();
  watch->Push(StateEvent(*stored), true);
  return watch;
}

absl::StatusOr<JobStore::Page> JobManager::List(const std::vector<v1::JobState>& states,
                                                const std::map<std::string, std::string>& labels, int page_size,
                                                int64_t before) {
  if (absl::Status s = CheckLabelFilter(labels); !s.ok()) return s;
  absl::StatusOr<JobStore::Page> page = store_->List(states, labels, page_size, before);
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
  const bool ours = a.job.state() == v1::JOB_STATE_RUNNING && a.job.worker_id() == w.id && a.job.attempt() == attempt &&
                    w.running.contains(job_id);
  return ours ? &a : nullptr;
}

void JobManager::Connected(std::shared_ptr<WorkerLink> link, const v1::WorkerHello& hello) {
  mu_.Lock();
  // A worker that reconnects before its old link was noticed gone.
  std::vector<WorkerLink*> stale;
  for (auto& [l, w] : workers_) {
    if (w.id == hello.worker_id()) stale.push_back(l);
  }
  for (WorkerLink* l : stale) {
    Later([link = workers_[l].link] { link->Close("replaced by a new connection from the same worker"); });
    DropWorker(l);
  }
  Worker& w = workers_[link.get()];
  w.link = link;
  w.id = hello.worker_id();
  w.capacity = std::max(1, hello.capacity());
  w.last_seen = absl::Now();
  for (const v1::JobFinished& f : hello.finished()) HandleFinished(w, f);
  for (const v1::RunningJob& r : hello.running()) {
    auto it = active_.find(r.job_id());
    const bool adopt = it != active_.end() && it->second.job.state() == v1::JOB_STATE_QUEUED &&
                       it->second.job.attempt() == r.attempt() && it->second.job.worker_id() == w.id &&
                       !it->second.cancel_requested;
    if (adopt) {
      // Still running where it was: keep it there rather than start over.
      Active& a = it->second;
      queue_.erase({-a.job.spec().priority(), a.seq, a.job.id()});
      a.job.set_state(v1::JOB_STATE_RUNNING);
      if (store_->Update(a.job).ok()) {
        w.running.insert(a.job.id());
        Publish(a);
        continue;
      }
      a.job.set_state(v1::JOB_STATE_QUEUED);
      queue_.insert({-a.job.spec().priority(), a.seq, a.job.id()});
    }
    v1::CoordinatorMessage m;
    m.mutable_cancel()->set_job_id(r.job_id());
    m.mutable_cancel()->set_attempt(r.attempt());
    link->Send(m);
  }
  Dispatch();
  Unlock();
}

void JobManager::Received(WorkerLink* link, const v1::WorkerMessage& m) {
  mu_.Lock();
  auto wit = workers_.find(link);
  if (wit == workers_.end()) {
    Unlock();
    return;
  }
  Worker& w = wit->second;
  w.last_seen = absl::Now();
  switch (m.message_case()) {
    case v1::WorkerMessage::kHeartbeat:
      for (const v1::RunningJob& r : m.heartbeat().running()) {
        if (Assigned(w, r.job_id(), r.attempt()) == nullptr) {
          v1::CoordinatorMessage cancel;
          cancel.mutable_cancel()->set_job_id(r.job_id());
          cancel.mutable_cancel()->set_attempt(r.attempt());
          w.link->Send(cancel);
        }
      }
      break;
    case v1::WorkerMessage::kProgress:
      if (Active* a = Assigned(w, m.progress().job_id(), m.progress().attempt())) {
        *a->job.mutable_progress() = m.progress().progress();
        a->node_rate = m.progress().progress().nodes_per_second();
        v1::JobEvent e;
        *e.mutable_progress() = m.progress().progress();
        for (auto& watch : a->watchers) watch->Push(e, false);
      }
      break;
    case v1::WorkerMessage::kFinished:
      HandleFinished(w, m.finished());
      break;
    case v1::WorkerMessage::kReleased:
      if (Active* a = Assigned(w, m.released().job_id(), m.released().attempt())) {
        w.running.erase(a->job.id());
        Requeue(*a, /*lost=*/false);
      }
      break;
    case v1::WorkerMessage::kDraining:
      w.draining = m.draining();
      break;
    default:
      break;
  }
  Dispatch();
  Unlock();
}

void JobManager::HandleFinished(Worker& w, const v1::JobFinished& f) {
  auto it = active_.find(f.job_id());
  if (it == active_.end()) return;  // already final: a repeat
  Active& a = it->second;
  // Only the attempt the job is on counts, and only from its own worker;
  // that is what keeps one final result per job.
  const bool current = a.job.attempt() == f.attempt() && a.job.worker_id() == w.id &&
                       (a.job.state() == v1::JOB_STATE_QUEUED || w.running.contains(a.job.id()));
  if (!current) return;
  w.running.erase(a.job.id());
  queue_.erase({-a.job.spec().priority(), a.seq, a.job.id()});
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
  mu_.Lock();
  DropWorker(link);
  Dispatch();
  Unlock();
}

void JobManager::DropWorker(WorkerLink* link) {
  auto it = workers_.find(link);
  if (it == workers_.end()) return;
  const std::set<std::string> running = std::move(it->second.running);
  workers_.erase(it);
  for (const std::string& id : running) {
    if (auto a = active_.find(id); a != active_.end()) Requeue(a->second, /*lost=*/true);
  }
}

// --- state changes ---

void JobManager::Publish(Active& a) {
  const v1::JobEvent e = StateEvent(a.job);
  for (auto& watch : a.watchers) watch->Push(e, false);
}

void JobManager::Dispatch() {
  if (stopping_) return;
  const absl::Time now = absl::Now();
  for (auto q = queue_.begin(); q != queue_.end();) {
    Worker* best = nullptr;
    for (auto& [link, w] : workers_) {
      const int free = w.capacity - static_cast<int>(w.running.size());
      if (!w.draining && free > 0 &&
          (best == nullptr || free > best->capacity - static_cast<int>(best->running.size()))) {
        best = &w;
      }
    }
    if (best == nullptr) return;
    auto found = active_.find(std::get<2>(*q));
    if (found == active_.end()) {
      q = queue_.erase(q);
      continue;
    }
    Active& a = found->second;
    if (a.not_before > now) {
      ++q;
      continue;
    }
    a.job.set_state(v1::JOB_STATE_RUNNING);
    a.job.set_attempt(a.job.attempt() + 1);
    a.job.set_worker_id(best->id);
    a.job.clear_progress();
    a.node_rate = 0;
    SetTime(a.job.mutable_start_time(), now);
    if (absl::Status s = store_->Update(a.job); !s.ok()) {
      // Leave it queued: a job is never out without the store knowing.
      a.job.set_state(v1::JOB_STATE_QUEUED);
      a.job.set_attempt(a.job.attempt() - 1);
      return;
    }
    q = queue_.erase(q);
    best->running.insert(a.job.id());
    v1::CoordinatorMessage m;
    v1::Assignment* assign = m.mutable_assign();
    assign->set_job_id(a.job.id());
    assign->set_attempt(a.job.attempt());
    *assign->mutable_spec() = a.job.spec();
    best->link->Send(m);
    instruments_.attempts->Increment();
    Publish(a);
  }
}

void JobManager::Requeue(Active& a, bool lost) {
  if (a.cancel_requested) {
    v1::Result result;
    result.set_status("cancelled");
    Finish(a, v1::JOB_STATE_CANCELLED, &result, "");
    return;
  }
  if (lost) a.job.set_lost_attempts(a.job.lost_attempts() + 1);
  if (a.job.lost_attempts() >= options_.max_lost_attempts) {
    Finish(a, v1::JOB_STATE_FAILED, nullptr,
           absl::StrFormat("the workers running this job were lost %d times (last: %s)", a.job.lost_attempts(),
                           a.job.worker_id()));
    return;
  }
  a.job.set_state(v1::JOB_STATE_QUEUED);
  a.job.clear_progress();
  a.node_rate = 0;
  (lost ? instruments_.requeued_lost : instruments_.requeued_released)->Increment();
  (void)store_->Update(a.job);  // if this fails, a restart finds it running and requeues it anyway
  queue_.insert({-a.job.spec().priority(), a.seq, a.job.id()});
  Publish(a);
}

void JobManager::Finish(Active& a, v1::JobState state, const v1::Result* result, const std::string& error) {
  v1::Job job = a.job;
  job.set_state(state);
  job.clear_progress();
  if (result != nullptr) *job.mutable_result() = *result;
  if (!error.empty()) job.set_error(error);
  SetTime(job.mutable_finish_time(), absl::Now());
  if (absl::Status s = store_->Update(job); !s.ok()) {
    // Not stored, so not final: run it again rather than report a result
    // a restart could lose.
    a.job.set_state(v1::JOB_STATE_QUEUED);
    queue_.insert({-a.job.spec().priority(), a.seq, a.job.id()});
    return;
  }
  Counter* finished = state == v1::JOB_STATE_DONE     ? instruments_.done
                      : state == v1::JOB_STATE_FAILED ? instruments_.failed
                                                      : instruments_.cancelled;
  finished->Increment();
  if (state == v1::JOB_STATE_DONE) {
    instruments_.latency->Observe(absl::ToDoubleSeconds(absl::Now() - TimeOf(job.create_time())));
  }
  instruments_.nodes_expanded->Increment(static_cast<double>(job.result().stats().expanded()));
  const v1::JobEvent e = StateEvent(job);
  for (auto& watch : a.watchers) watch->Push(e, true);
  for (Waiter& waiter : a.waiters) Later([done = std::move(waiter.done), job] { done(job); });
  active_.erase(job.id());
}

// --- lifecycle ---

void JobManager::Housekeeping() {
  constexpr absl::Duration kTick = absl::Milliseconds(100);
  for (;;) {
    mu_.Lock();
    if (stopping_) {
      Unlock();
      return;
    }
    const absl::Time now = absl::Now();
    std::vector<WorkerLink*> expired;
    for (auto& [link, w] : workers_) {
      if (now - w.last_seen > options_.lease_timeout) expired.push_back(link);
    }
    for (WorkerLink* link : expired) {
      Later([l = workers_[link].link] { l->Close("lease expired: no word from the worker"); });
      DropWorker(link);
    }
    for (auto& [id, a] : active_) {
      for (auto w = a.waiters.begin(); w != a.waiters.end();) {
        if (w->deadline <= now) {
          Later([done = std::move(w->done), job = a.job] { done(job); });
          w = a.waiters.erase(w);
        } else {
          ++w;
        }
      }
    }
    Dispatch();
    Unlock();
    absl::SleepFor(kTick);
  }
}

void JobManager::Drain(absl::Duration grace) {
  mu_.Lock();
  accepting_ = false;
  auto any_running = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const auto& [link, w] : workers_) {
      if (!w.running.empty()) return true;
    }
    return false;
  };
  // Hand out nothing more; wait for what runs.
  for (auto& [link, w] : workers_) w.draining = true;
  const absl::Time deadline = absl::Now() + grace;
  while (any_running() && absl::Now() < deadline) {
    mu_.Unlock();
    absl::SleepFor(absl::Milliseconds(50));
    mu_.Lock();
  }
  std::vector<WorkerLink*> links;
  for (auto& [link, w] : workers_) links.push_back(link);
  for (WorkerLink* link : links) {
    Worker& w = workers_[link];
    // Its jobs stay recorded as running under this worker and attempt, as
    // after a crash: the next coordinator gives their worker the recovery
    // grace to reconnect and keep them before anyone else may take them.
    w.running.clear();
    Later([l = w.link] { l->Close("the coordinator is shutting down"); });
  }
  workers_.clear();
  stopping_ = true;
  Unlock();
}

ManagerCounts JobManager::Counts() {
  absl::MutexLock lock(&mu_);
  ManagerCounts c;
  c.queued = static_cast<int64_t>(queue_.size());
  c.running = static_cast<int64_t>(active_.size()) - c.queued;
  c.workers = static_cast<int64_t>(workers_.size());
  for (const auto& [link, w] : workers_) {
    if (!w.draining) c.free_slots += std::max(0, w.capacity - static_cast<int>(w.running.size()));
  }
  return c;
}

}  // namespace npuzzle
