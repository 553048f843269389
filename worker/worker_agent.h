// WorkerAgent: a worker's life. It dials the coordinator (retrying with
// backoff), introduces itself with its capacity and whatever it was still
// running or had not yet reported, runs up to `concurrency` jobs at once
// with the engine, and reports progress (newest only, on its own thread so
// a slow link never slows a search) and results. Drain() stops it taking
// work and gives running jobs a grace period before handing them back.
#ifndef NPUZZLE_WORKER_WORKER_AGENT_H_
#define NPUZZLE_WORKER_WORKER_AGENT_H_

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/metrics.h"
#include "engine/search.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "npuzzle/v1/worker.grpc.pb.h"
#include "worker/connection_hint.h"

namespace npuzzle {

struct AgentOptions {
  std::string coordinator = "localhost:50052";
  std::string worker_id;
  int concurrency = 1;
  int max_search_threads = 1;
  std::string pdb_dir;           // empty: the engine's default
  uint64_t pdb_cache_bytes = 0;  // 0: the engine's default
  absl::Duration progress_interval = absl::Milliseconds(250);
  absl::Duration heartbeat_interval = absl::Seconds(1);
  absl::Duration drain_grace = absl::Seconds(25);
  // How often a job's progress inside a long IDA* threshold (its finished
  // subtrees) is sent to be stored; a finished threshold goes at once.
  absl::Duration checkpoint_interval = absl::Seconds(5);
  // How to dial the coordinator: plaintext unless set (see common/tls.h);
  // the channel arguments may carry a TLS server-name override.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  grpc::ChannelArguments channel_args;
  WorkerSecurity security;  // what the credentials hold, for hints when refused
};

class WorkerAgent {
 public:
  explicit WorkerAgent(AgentOptions options);

  // Works until Drain() has finished; then returns.
  void Run();
  // From any thread (a signal handler thread): take no more jobs, let the
  // running ones finish for the grace period, hand back the rest, end Run.
  void Drain();

  // The worker's Prometheus metrics.
  const Metrics& metrics() const { return metrics_; }

 private:
  using Stream = grpc::ClientReaderWriter<v1::WorkerMessage, v1::CoordinatorMessage>;

  // A job runs whole (unit 0) or as one work unit of a job spread over
  // workers; a worker may run several units of one job at once.
  using Key = std::pair<std::string, int64_t>;  // job id, unit id
  struct Job {
    std::string id;
    int64_t unit = 0;
    int attempt = 0;
    v1::Checkpoint resume;  // where an earlier attempt got to
    CancelToken cancel;
    bool release = false;  // stopped for shutdown: hand back, don't report
    std::optional<v1::Progress> unsent_progress;
    // How far the IDA* search got (jobspec/checkpoint.h), and the newest
    // better answer of an anytime search, each sent on a later tick
    // (SendLoop) rather than at once: a job that ends before then has no
    // use for them, and sending them would hold up its result behind writes
    // and commits of their own. An answer improved several times within a
    // tick goes out once; a finished threshold on the next tick, finished
    // subtrees of one at most every checkpoint_interval.
    v1::Checkpoint latest;
    bool latest_unsent = false;
    absl::Time latest_due = absl::InfinitePast();
    std::optional<v1::Checkpoint> unsent_best;
    uint64_t counted_expanded = 0;  // already added to the expanded counter
    double node_rate = 0;
    // A work unit's: how the coordinator asks it to give part of itself
    // back, and the subtrees it gave (sent again with its result).
    std::unique_ptr<HandBack> hand_back;
    std::vector<std::string> handed_back;
  };

  // One stream with the coordinator, until it ends; how it ended.
  grpc::Status Session(v1::WorkerService::Stub& stub);
  // A stream opened without waiting for the coordinator and closed at
  // once: its status says why the coordinator cannot be reached.
  grpc::Status Probe(v1::WorkerService::Stub& stub);
  // Logs why `status` ended a connection, with a hint, unless the hint is
  // `reported` (the last one logged) or there is none.
  void ReportRefusal(const grpc::Status& status, std::string& reported);
  void StartJob(const v1::Assignment& assignment);
  // A runner thread: runs waiting jobs until the agent stops.
  void RunJobs();
  // Runs the assignment's job, or its work unit (a subtree pass).
  void RunJob(std::shared_ptr<Job> job, const v1::Assignment& assignment);
  // Writes on the current stream; false when there is none or it failed.
  bool Send(const v1::WorkerMessage& message);
  void SendLoop();
  v1::WorkerMessage Hello();
  void RegisterMetrics();
  // Adds what `job` expanded since it last counted.
  void CountExpanded(Job& job, uint64_t expanded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<Sample> Sum(const std::function<double(const Job&)>& value);

  const AgentOptions options_;
  // WorkerHello.instance: this process among any that share its worker id.
  const std::string instance_;
  Metrics metrics_;
  prometheus::Counter* expanded_;
  prometheus::Counter* finished_;
  prometheus::Counter* released_;

  absl::Mutex mu_;
  std::map<Key, std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  // Jobs waiting for one of the `concurrency` runner threads, which Run
  // starts and joins (a thread per job costs more than a trivial job).
  std::deque<std::pair<std::shared_ptr<Job>, v1::Assignment>> waiting_ ABSL_GUARDED_BY(mu_);
  // Recent results, repeated in each hello: one written just before a link
  // broke may never have arrived, and the coordinator ignores repeats.
  std::deque<v1::JobFinished> recent_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;

  absl::Mutex stream_mu_;  // held while writing
  Stream* stream_ ABSL_GUARDED_BY(stream_mu_) = nullptr;
};

}  // namespace npuzzle

#endif  // NPUZZLE_WORKER_WORKER_AGENT_H_
