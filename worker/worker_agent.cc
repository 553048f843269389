#include "worker/worker_agent.h"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "engine/pdb/pdb_store.h"
#include "engine/solver.h"
#include "grpcpp/grpcpp.h"
#include "jobspec/checkpoint.h"
#include "jobspec/job_spec.h"
#include "jobspec/work_unit.h"

namespace npuzzle {
namespace {

constexpr size_t kRecentResults = 64;

// A resumed run's statistics, for the whole job.
void AddEarlierWork(const v1::Checkpoint& earlier, v1::Stats* stats) {
  stats->set_resumed_from_bound(earlier.bound());
  stats->set_expanded(stats->expanded() + earlier.expanded());
  stats->set_generated(stats->generated() + earlier.generated());
  stats->set_iterations(stats->iterations() + earlier.iterations());
}

// Names the job (or unit) and attempt a message is about.
template <class Message, class Job>
void Name(Message* m, const Job& job) {
  m->set_job_id(job.id);
  m->set_unit_id(job.unit);
  m->set_attempt(job.attempt);
}

// The job's checkpoint messages due by `now` (all of them at
// InfiniteFuture), threshold first; the next threshold message is due
// `interval` after this one.
template <class Job>
std::vector<v1::WorkerMessage> TakeUnsent(Job& job, absl::Time now, absl::Duration interval) {
  std::vector<v1::WorkerMessage> out;
  auto add = [&](const v1::Checkpoint& checkpoint) {
    v1::WorkerMessage& m = out.emplace_back();
    m.mutable_checkpoint()->set_job_id(job.id);
    m.mutable_checkpoint()->set_attempt(job.attempt);
    *m.mutable_checkpoint()->mutable_checkpoint() = checkpoint;
  };
  if (job.latest_unsent && now >= job.latest_due) {
    add(job.latest);
    job.latest_unsent = false;
    job.latest_due = now + interval;
  }
  if (job.unsent_best) {
    add(*job.unsent_best);
    job.unsent_best.reset();
  }
  return out;
}

}  // namespace

WorkerAgent::WorkerAgent(AgentOptions options)
    : options_(std::move(options)), instance_(absl::StrFormat("%016x", absl::Uniform<uint64_t>(absl::BitGen()))) {
  RegisterMetrics();
}

void WorkerAgent::RegisterMetrics() {
  Metrics& m = metrics_;
  const std::string jobs = "npuzzle_worker_jobs_total";
  const std::string jobs_help = "jobs this worker ended: finished (result reported) or released (handed back)";
  expanded_ = m.AddCounter("npuzzle_worker_nodes_expanded_total", "states this worker's searches expanded");
  finished_ = m.AddCounter(jobs, jobs_help, {{"outcome", "finished"}});
  released_ = m.AddCounter(jobs, jobs_help, {{"outcome", "released"}});
  m.AddGauge("npuzzle_worker_slots", "jobs this worker runs at once")->Set(options_.concurrency);
  m.AddCollectedGauge("npuzzle_worker_running_jobs", "jobs running now",
                      [this] { return Sum([](const Job&) { return 1.0; }); });
  m.AddCollectedGauge("npuzzle_worker_node_rate", "states per second, summed over running jobs",
                      [this] { return Sum([](const Job& job) { return job.node_rate; }); });
  m.AddCollectedGauge("npuzzle_pdb_tables_loaded", "pattern-database tables this process holds", [this] {
    return std::vector<Sample>{{{}, static_cast<double>(PdbStore::ForDirectory(options_.pdb_dir).tables())}};
  });
  m.AddCollectedGauge("npuzzle_pdb_tables_built", "pattern-database tables this process built (not loaded)", [this] {
    return std::vector<Sample>{{{}, static_cast<double>(PdbStore::ForDirectory(options_.pdb_dir).built())}};
  });
}

std::vector<Sample> WorkerAgent::Sum(const std::function<double(const Job&)>& value) {
  absl::MutexLock lock(&mu_);
  double total = 0;
  for (const auto& [id, job] : jobs_) total += value(*job);
  return {{{}, total}};
}

void WorkerAgent::CountExpanded(Job& job, uint64_t expanded) {
  if (expanded <= job.counted_expanded) return;
  expanded_->Increment(static_cast<double>(expanded - job.counted_expanded));
  job.counted_expanded = expanded;
}

v1::WorkerMessage WorkerAgent::Hello() {
  v1::WorkerMessage m;
  v1::WorkerHello* hello = m.mutable_hello();
  hello->set_worker_id(options_.worker_id);
  hello->set_capacity(options_.concurrency);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  hello->set_host(host);
  hello->set_instance(instance_);
  absl::MutexLock lock(&mu_);
  for (const auto& [key, job] : jobs_) Name(hello->add_running(), *job);
  for (const v1::JobFinished& f : recent_) *hello->add_finished() = f;
  return m;
}

bool WorkerAgent::Send(const v1::WorkerMessage& message) {
  absl::MutexLock lock(&stream_mu_);
  return stream_ != nullptr && stream_->Write(message);
}

void WorkerAgent::Run() {
  grpc::ChannelArguments args = options_.channel_args;
  // Notice a coordinator that vanished without closing the connection.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  auto channel = grpc::CreateCustomChannel(
      options_.coordinator, options_.credentials ? options_.credentials : grpc::InsecureChannelCredentials(), args);
  auto stub = v1::WorkerService::NewStub(channel);
  std::thread sender([this] { SendLoop(); });
  std::vector<std::thread> runners;
  for (int i = 0; i < std::max(1, options_.concurrency); ++i) runners.emplace_back([this] { RunJobs(); });
  absl::BitGen random;
  absl::Duration backoff = absl::Milliseconds(100);
  std::string reported;  // the last refusal logged: each is logged once
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) break;
    }
    // A session waits for the coordinator, so that it starts the moment the
    // coordinator is back; one that cannot be reached at all is asked
    // once, without waiting, so that its reason is logged.
    if (!channel->WaitForConnected(absl::ToChronoTime(absl::Now() + absl::Seconds(2)))) {
      ReportRefusal(Probe(*stub), reported);
    }
    const absl::Time began = absl::Now();
    // A session that ends is usually a coordinator going away, which the
    // probe above explains; one that ends because there is no worker
    // service is explained here.
    if (const grpc::Status ended = Session(*stub); ended.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      ReportRefusal(ended, reported);
    }
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) break;
    }
    // A session that lasted was fine: start the backoff over.
    if (absl::Now() - began > absl::Seconds(10)) backoff = absl::Milliseconds(100);
    absl::SleepFor(backoff * absl::Uniform(random, 0.5, 1.5));
    backoff = std::min(backoff * 2, absl::Seconds(2));
  }
  sender.join();
  for (std::thread& runner : runners) runner.join();
}

grpc::Status WorkerAgent::Probe(v1::WorkerService::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  std::unique_ptr<Stream> stream = stub.Connect(&context);
  stream->WritesDone();
  return stream->Finish();
}

void WorkerAgent::ReportRefusal(const grpc::Status& status, std::string& reported) {
  const std::string hint = ConnectionHint(status, options_.security);
  if (status.ok() || status.error_code() == grpc::StatusCode::CANCELLED || hint.empty() || hint == reported) return;
  reported = hint;
  Log(absl::StrCat("cannot work with the coordinator at ", options_.coordinator, ": ",
                   status.error_message().empty() ? hint : absl::StrCat(status.error_message(), " (", hint, ")")));
}

grpc::Status WorkerAgent::Session(v1::WorkerService::Stub& stub) {
  grpc::ClientContext context;
  // Wait for the coordinator rather than fail at once: the channel retries
  // the connection and the stream starts the moment it is back.
  context.set_wait_for_ready(true);
  bool draining;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return grpc::Status::CANCELLED;
    context_ = &context;  // Drain can cancel even a stream still waiting
    draining = draining_;
  }
  std::unique_ptr<Stream> stream = stub.Connect(&context);
  if (!stream->Write(Hello())) {
    const grpc::Status status = stream->Finish();
    absl::MutexLock lock(&mu_);
    context_ = nullptr;
    return status;
  }
  {
    absl::MutexLock lock(&stream_mu_);
    stream_ = stream.get();
  }
  Log("connected to " + options_.coordinator);
  if (draining) {
    v1::WorkerMessage m;
    m.set_draining(true);
    Send(m);
  }
  v1::CoordinatorMessage incoming;
  while (stream->Read(&incoming)) {
    if (incoming.has_assign()) {
      StartJob(incoming.assign());
    } else if (incoming.has_cancel()) {
      absl::MutexLock lock(&mu_);
      auto it = jobs_.find({incoming.cancel().job_id(), incoming.cancel().unit_id()});
      if (it != jobs_.end() && it->second->attempt == incoming.cancel().attempt()) it->second->cancel.Cancel();
    } else if (incoming.has_hand_back()) {
      absl::MutexLock lock(&mu_);
      auto it = jobs_.find({incoming.hand_back().job_id(), incoming.hand_back().unit_id()});
      if (it != jobs_.end() && it->second->attempt == incoming.hand_back().attempt() && it->second->hand_back) {
        it->second->hand_back->Request();
      }
    }
  }
  {
    absl::MutexLock lock(&stream_mu_);
    stream_ = nullptr;
  }
  {
    absl::MutexLock lock(&mu_);
    context_ = nullptr;
  }
  const grpc::Status status = stream->Finish();
  Log(absl::StrCat("disconnected: ", status.error_message().empty() ? "stream ended" : status.error_message()));
  return status;
}

void WorkerAgent::StartJob(const v1::Assignment& assignment) {
  auto job = std::make_shared<Job>();
  job->id = assignment.job_id();
  job->unit = assignment.unit().id();
  job->attempt = assignment.attempt();
  job->resume = assignment.checkpoint();
  job->latest = job->resume;
  if (assignment.has_unit()) {
    // Given away only once the coordinator has it: what a pass gives is
    // searched by no one else otherwise.
    job->hand_back = std::make_unique<HandBack>([this, job = job.get()](std::vector<std::vector<Dir>> prefixes) {
      v1::WorkerMessage m;
      v1::HandedBack* given = m.mutable_handed_back();
      Name(given, *job);
      for (const std::vector<Dir>& prefix : prefixes) given->add_prefixes(MovesToString(prefix));
      if (!Send(m)) return false;
      absl::MutexLock lock(&mu_);
      job->handed_back.insert(job->handed_back.end(), given->prefixes().begin(), given->prefixes().end());
      return true;
    });
  }
  {
    absl::MutexLock lock(&mu_);
    if (jobs_.contains({job->id, job->unit})) return;  // a repeat
    if (draining_) {
      v1::WorkerMessage m;
      Name(m.mutable_released(), *job);
      Send(m);
      return;
    }
    jobs_[{job->id, job->unit}] = job;
    waiting_.emplace_back(job, assignment);
  }
}

void WorkerAgent::RunJobs() {
  for (;;) {
    std::pair<std::shared_ptr<Job>, v1::Assignment> next;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !waiting_.empty() || stopped_; };
      mu_.Await(absl::Condition(&ready));
      if (waiting_.empty()) return;
      next = std::move(waiting_.front());
      waiting_.pop_front();
    }
    RunJob(std::move(next.first), next.second);
  }
}

void WorkerAgent::RunJob(std::shared_ptr<Job> job, const v1::Assignment& assignment) {
  v1::WorkerMessage done;
  v1::JobFinished* finished = done.mutable_finished();
  Name(finished, *job);
  uint64_t run_expanded = 0;
  absl::StatusOr<SolveRequest> request = RequestFromAssignment(assignment, job->hand_back.get());
  if (request.ok()) {
    request->heuristic_options.pdb_dir = options_.pdb_dir;
    request->heuristic_options.pdb_cache_bytes = options_.pdb_cache_bytes;
    request->heuristic_options.on_message = [this](absl::string_view m) { Log(m); };
    request->options.threads = std::clamp(request->options.threads, 1, options_.max_search_threads);
    request->options.progress_interval = options_.progress_interval;
    request->options.cancel = &job->cancel;
    request->options.on_progress = [this, job](const Progress& p) {
      absl::MutexLock lock(&mu_);
      job->unsent_progress = ProgressToProto(p);
      job->node_rate = job->unsent_progress->nodes_per_second();
      CountExpanded(*job, job->unsent_progress->expanded());
    };
    // A checkpoint is what a lost attempt saves. A finished threshold goes
    // out with the next tick's progress, at most 50 ms after it was passed.
    request->options.on_checkpoint = [this, job](const IterationCheckpoint& c) {
      v1::Checkpoint checkpoint = AfterIteration(job->resume, c);
      absl::MutexLock lock(&mu_);
      job->latest = std::move(checkpoint);
      job->latest_unsent = true;
      job->latest_due = absl::InfinitePast();
    };
    // Subtrees of a long threshold, so that a lost attempt loses minutes of
    // it rather than hours. A work unit is one subtree already.
    if (job->unit == 0) {
      request->options.on_subtree_checkpoint = [this, job](const SubtreeCheckpoint& s) {
        absl::MutexLock lock(&mu_);
        AddSubtree(s, &job->latest);
        job->latest_unsent = true;
      };
    }
    // So does a better answer of an anytime solve: a re-run starts from it.
    request->on_improvement = [this, job](const BestSoFar& best) {
      v1::Checkpoint checkpoint;
      checkpoint.set_best_moves(MovesToString(best.moves));
      checkpoint.set_lower_bound(best.lower_bound);
      absl::MutexLock lock(&mu_);
      job->unsent_best = std::move(checkpoint);
    };
    absl::StatusOr<SolveResult> result = Solve(*request);
    if (result.ok()) {
      run_expanded = result->stats.expanded;
      *finished->mutable_result() = ResultToProto(*result);
      finished->set_next_bound(result->next_bound);
      if (job->resume.bound() > 0) AddEarlierWork(job->resume, finished->mutable_result()->mutable_stats());
    } else {
      finished->set_error(std::string(result.status().message()));
      finished->set_error_permanent(IsSpecError(result.status()));
    }
  } else {
    finished->set_error(std::string(request.status().message()));
    finished->set_error_permanent(IsSpecError(request.status()));
  }
  bool release;
  std::vector<v1::WorkerMessage> unsent;
  {
    absl::MutexLock lock(&mu_);
    release = job->release;
    unsent = TakeUnsent(*job, absl::InfiniteFuture(), options_.checkpoint_interval);
    CountExpanded(*job, run_expanded);
    for (const std::string& prefix : job->handed_back) finished->add_handed_back(prefix);
    (release ? released_ : finished_)->Increment();
    if (!release) {
      recent_.push_back(*finished);
      if (recent_.size() > kRecentResults) recent_.pop_front();
    }
  }
  if (release) {
    // The next attempt resumes from them; a finished job has no use for them.
    for (const v1::WorkerMessage& m : unsent) Send(m);
    v1::WorkerMessage m;
    Name(m.mutable_released(), *job);
    Send(m);
  } else {
    Send(done);
  }
  // Only now: a drain waits for this, and must not close the link before
  // the message above is on it.
  absl::MutexLock lock(&mu_);
  jobs_.erase({job->id, job->unit});
}

void WorkerAgent::SendLoop() {
  constexpr absl::Duration kTick = absl::Milliseconds(50);
  absl::Time next_heartbeat = absl::Now();
  for (;;) {
    std::vector<v1::WorkerMessage> out;
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) return;
      const absl::Time now = absl::Now();
      for (auto& [key, job] : jobs_) {
        // Checkpoints first: the progress after them shows their answer.
        for (v1::WorkerMessage& m : TakeUnsent(*job, now, options_.checkpoint_interval)) out.push_back(std::move(m));
        if (!job->unsent_progress) continue;
        v1::WorkerMessage m;
        Name(m.mutable_progress(), *job);
        *m.mutable_progress()->mutable_progress() = *std::move(job->unsent_progress);
        job->unsent_progress.reset();
        out.push_back(std::move(m));
      }
      if (now >= next_heartbeat) {
        next_heartbeat = now + options_.heartbeat_interval;
        v1::WorkerMessage m;
        for (const auto& [key, job] : jobs_) Name(m.mutable_heartbeat()->add_running(), *job);
        if (!m.has_heartbeat()) m.mutable_heartbeat();
        out.push_back(std::move(m));
      }
    }
    for (const v1::WorkerMessage& m : out) Send(m);
    absl::SleepFor(kTick);
  }
}

void WorkerAgent::Drain() {
  Log(absl::StrCat("draining: running jobs get ", absl::FormatDuration(options_.drain_grace)));
  {
    absl::MutexLock lock(&mu_);
    draining_ = true;
  }
  v1::WorkerMessage draining;
  draining.set_draining(true);
  Send(draining);

  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return jobs_.empty(); };
  mu_.Lock();
  mu_.AwaitWithTimeout(absl::Condition(&idle), options_.drain_grace);
  for (auto& [id, job] : jobs_) {
    job->release = true;
    job->cancel.Cancel();
  }
  // Cancelled searches and table builds stop within milliseconds; then
  // they are handed back. Wait for every one: their threads use the agent.
  if (!mu_.AwaitWithTimeout(absl::Condition(&idle), absl::Seconds(2))) {
    Log("waiting for cancelled jobs to stop");
    mu_.Await(absl::Condition(&idle));
  }
  stopped_ = true;
  mu_.Unlock();
  // Half-closed rather than cancelled, the stream ends once the coordinator
  // has read every message on it, the hand-backs above included; a cancel
  // could overtake them, and the jobs would count as lost. A coordinator
  // that does not answer within a few seconds (or a stream still waiting
  // to connect) is cancelled all the same.
  bool half_closed;
  {
    absl::MutexLock lock(&stream_mu_);
    half_closed = stream_ != nullptr && stream_->WritesDone();
  }
  auto session_ended = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return context_ == nullptr; };
  absl::MutexLock lock(&mu_);
  if (half_closed && mu_.AwaitWithTimeout(absl::Condition(&session_ended), absl::Seconds(5))) return;
  if (context_ != nullptr) context_->TryCancel();
}

}  // namespace npuzzle
