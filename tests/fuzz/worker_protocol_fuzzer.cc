// The coordinator's handling of its workers: a sequence of submissions,
// cancellations, worker connections (with what they say they run or have
// finished), worker messages for known, unknown and stale jobs, work
// units of jobs spread over workers, and attempts, disconnects and
// coordinator restarts, driven into the job
// manager over fake links and a real store. After every step the manager's
// invariants must hold (each job queued or leased to the one worker it
// names, no lease without its job), and a job's final result, once stored,
// never changes.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/jobs/job_manager.h"
#include "service/store/sqlite_job_store.h"
#include "tests/fuzz/fuzz_check.h"

namespace npuzzle {
namespace {

class FakeLink : public WorkerLink {
 public:
  void Send(const v1::CoordinatorMessage&) override {}
  void Close(const std::string&) override {}
};

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  int Next(int n) { return at_ < size_ ? data_[at_++] % n : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

class Run {
 public:
  explicit Run(const std::string& dir) : path_(dir + "/jobs.db") { Open(); }

  void Step(Input& in) {
    switch (in.Next(10)) {
      case 0: {
        v1::JobSpec spec;
        spec.mutable_start()->set_text(in.Next(2) ? "8 1 3 4 0 2 7 6 5" : "1 2 3 4 5 6 7 0 8");
        if (in.Next(2)) spec.set_request_id("request-" + std::to_string(in.Next(3)));
        spec.set_priority(in.Next(3) - 1);
        if (in.Next(2)) {
          spec.set_algorithm("idastar");
          spec.set_max_workers(2 + in.Next(3));
        }
        absl::StatusOr<v1::Job> job = manager_->Submit(spec);
        if (job.ok() && !known(job->id())) ids_.push_back(job->id());
        break;
      }
      case 1:
        if (!ids_.empty()) (void)manager_->Cancel(ids_[in.Next(ids_.size())]);
        break;
      case 2: {
        const int k = in.Next(3);
        links_[k] = std::make_shared<FakeLink>();
        v1::WorkerHello hello;
        hello.set_worker_id(absl::StrCat("w", k));
        hello.set_capacity(in.Next(4));
        for (int n = in.Next(3); n > 0 && !ids_.empty(); --n) {
          v1::RunningJob* r = hello.add_running();
          Aim(in, r);
          r->set_attempt(in.Next(5));
        }
        for (int n = in.Next(2); n > 0 && !ids_.empty(); --n) *hello.add_finished() = Finished(in);
        (void)manager_->Connected(links_[k], hello);  // a refusal is one of the outcomes fuzzed
        break;
      }
      case 3:
        if (auto it = links_.find(in.Next(3)); it != links_.end()) {
          manager_->Disconnected(it->second.get());
          links_.erase(it);
        }
        break;
      case 4:
      case 5:
      case 6: {
        auto it = links_.find(in.Next(3));
        if (it == links_.end() || ids_.empty()) break;
        v1::WorkerMessage m;
        switch (in.Next(6)) {
          case 0:
            Aim(in, m.mutable_heartbeat()->add_running());
            break;
          case 1:
            Aim(in, m.mutable_progress());
            m.mutable_progress()->set_attempt(in.Next(5));
            // Enough, at times, for the coordinator to ask for part of a unit back.
            m.mutable_progress()->mutable_progress()->set_expanded(in.Next(2) ? in.Next(100) : 1000000);
            break;
          case 4:
            Aim(in, m.mutable_handed_back());
            m.mutable_handed_back()->set_attempt(in.Next(5));
            AddPrefixes(in, m.mutable_handed_back()->mutable_prefixes());
            break;
          case 2:
            *m.mutable_finished() = Finished(in);
            break;
          case 3:
            Aim(in, m.mutable_released());
            m.mutable_released()->set_attempt(in.Next(5));
            break;
          default:
            m.set_draining(in.Next(2));
            break;
        }
        manager_->Received(it->second.get(), m);
        break;
      }
      case 7:
        // The coordinator dies and comes back; its workers' links die too.
        links_.clear();
        manager_.reset();
        store_.reset();
        Open();
        break;
      default:
        break;
    }
    manager_->Sync();
    absl::Status invariants = manager_->CheckInvariants();
    FUZZ_CHECK(invariants.ok(), "%s", invariants.ToString().c_str());
    CheckFinalResults();
  }

 private:
  void Open() {
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path_, /*full_sync=*/false);
    FUZZ_CHECK(store.ok(), "%s", store.status().ToString().c_str());
    store_ = *std::move(store);
    ManagerOptions options;
    options.recovery_grace = absl::ZeroDuration();
    options.max_lost_attempts = 3;
    manager_ = std::make_unique<JobManager>(store_.get(), options);
    FUZZ_CHECK(manager_->Start().ok(), "start");
  }

  v1::JobFinished Finished(Input& in) {
    v1::JobFinished f;
    Aim(in, &f);
    f.set_attempt(in.Next(5));
    switch (in.Next(4)) {
      case 0:
        f.mutable_result()->set_status("solved");
        f.mutable_result()->set_moves(std::string(1 + in.Next(4), 'U'));
        break;
      case 1:
        f.mutable_result()->set_status("cancelled");
        break;
      case 2:
        f.mutable_result()->set_status("depth_limit");
        f.set_next_bound(in.Next(40));
        break;
      default:
        f.set_error("boom");
        break;
    }
    AddPrefixes(in, f.mutable_handed_back());
    return f;
  }

  // Up to three subtrees handed back: moves, now and then one no move names.
  static void AddPrefixes(Input& in, google::protobuf::RepeatedPtrField<std::string>* prefixes) {
    for (int n = in.Next(4); n > 0; --n) {
      std::string* prefix = prefixes->Add();
      for (int moves = in.Next(12); moves > 0; --moves) prefix->push_back("UDLRX"[in.Next(5)]);
    }
  }

  // Aims a message at a known job, or at one of its first work units.
  template <class Message>
  void Aim(Input& in, Message* m) {
    m->set_job_id(ids_[in.Next(ids_.size())]);
    if (!in.Next(2)) m->set_unit_id(1 + in.Next(8));
  }

  bool known(const std::string& id) const { return std::find(ids_.begin(), ids_.end(), id) != ids_.end(); }

  // A stored final state and result never change.
  void CheckFinalResults() {
    for (const std::string& id : ids_) {
      absl::StatusOr<v1::Job> job = store_->Get(id);
      FUZZ_CHECK(job.ok(), "an accepted job is missing: %s", job.status().ToString().c_str());
      const bool final = job->state() == v1::JOB_STATE_DONE || job->state() == v1::JOB_STATE_FAILED ||
                         job->state() == v1::JOB_STATE_CANCELLED;
      auto seen = finals_.find(id);
      if (seen != finals_.end()) {
        FUZZ_CHECK(job->state() == seen->second.state() &&
                       job->result().SerializeAsString() == seen->second.result().SerializeAsString(),
                   "job %s finished twice", id.c_str());
      } else if (final) {
        finals_[id] = *job;
      }
    }
  }

  const std::string path_;
  std::unique_ptr<JobStore> store_;
  std::unique_ptr<JobManager> manager_;
  std::map<int, std::shared_ptr<FakeLink>> links_;
  std::vector<std::string> ids_;
  std::map<std::string, v1::Job> finals_;
};

}  // namespace
}  // namespace npuzzle

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuzzle;
  static int runs = 0;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("npuzzle-fuzz-protocol-" + std::to_string(getpid()) + "-" + std::to_string(runs++));
  std::filesystem::create_directories(dir);
  {
    Run run(dir);
    Input in(data, std::min<size_t>(size, 400));
    while (!in.empty()) run.Step(in);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
