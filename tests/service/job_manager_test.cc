// The coordinator's job model, driven directly (no network): a real SQLite
// file, fake worker links that record what they are sent.
#include "service/jobs/job_manager.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobspec/job_spec.h"
#include "jobspec/work_unit.h"
#include "service/store/sqlite_job_store.h"
#include "tests/service/each_store.h"
#include "tests/util/http_get.h"
#include "tests/util/process_util.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;

class FakeLink : public WorkerLink {
 public:
  void Send(const v1::CoordinatorMessage& m) override {
    absl::MutexLock lock(&mu_);
    sent_.push_back(m);
  }
  void Close(const std::string& why) override {
    absl::MutexLock lock(&mu_);
    closed_ = why;
  }
  std::vector<v1::Assignment> Assignments() {
    return Sent(&v1::CoordinatorMessage::has_assign, &v1::CoordinatorMessage::assign);
  }
  std::vector<v1::CancelRequest> Cancels() {
    return Sent(&v1::CoordinatorMessage::has_cancel, &v1::CoordinatorMessage::cancel);
  }
  std::vector<v1::HandBackRequest> HandBacks() {
    return Sent(&v1::CoordinatorMessage::has_hand_back, &v1::CoordinatorMessage::hand_back);
  }
  std::string closed() {
    absl::MutexLock lock(&mu_);
    return closed_;
  }

 private:
  template <class T>
  std::vector<T> Sent(bool (v1::CoordinatorMessage::*has)() const, const T& (v1::CoordinatorMessage::*get)() const) {
    absl::MutexLock lock(&mu_);
    std::vector<T> out;
    for (const auto& m : sent_) {
      if ((m.*has)()) out.push_back((m.*get)());
    }
    return out;
  }

  absl::Mutex mu_;
  std::vector<v1::CoordinatorMessage> sent_;
  std::string closed_;
};

// Holds the store's write lock from a connection of its own, as another
// process could: commits wait behind it until it is released.
class StoreWriteLock {
 public:
  explicit StoreWriteLock(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  ~StoreWriteLock() { Release(); }
  void Release() {
    if (db_ == nullptr) return;
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  sqlite3* db_ = nullptr;
};

v1::JobSpec Spec(const std::string& board = "8 1 3 4 0 2 7 6 5") {
  v1::JobSpec spec;
  spec.mutable_start()->set_text(board);
  return spec;
}

v1::WorkerMessage Finished(const v1::Assignment& a, const std::string& status = "solved") {
  v1::WorkerMessage m;
  m.mutable_finished()->set_job_id(a.job_id());
  m.mutable_finished()->set_unit_id(a.unit().id());
  m.mutable_finished()->set_attempt(a.attempt());
  m.mutable_finished()->mutable_result()->set_status(status);
  m.mutable_finished()->mutable_result()->set_moves("UD");
  return m;
}

// A worker's answer to a work unit, searched here as a worker would. With
// `handed_back`, the unit is asked for part of itself back as it starts,
// and the message that gives it back goes there (its result lists it too).
v1::WorkerMessage UnitResult(const v1::Assignment& a, v1::WorkerMessage* handed_back = nullptr) {
  v1::WorkerMessage m;
  v1::JobFinished* finished = m.mutable_finished();
  HandBack hand_back([&](std::vector<std::vector<Dir>> prefixes) {
    handed_back->mutable_handed_back()->set_job_id(a.job_id());
    handed_back->mutable_handed_back()->set_unit_id(a.unit().id());
    handed_back->mutable_handed_back()->set_attempt(a.attempt());
    for (const std::vector<Dir>& prefix : prefixes) {
      handed_back->mutable_handed_back()->add_prefixes(MovesToString(prefix));
      finished->add_handed_back(MovesToString(prefix));
    }
    return true;
  });
  if (handed_back != nullptr) hand_back.Request();
  absl::StatusOr<SolveRequest> request = RequestFromAssignment(a, &hand_back);
  EXPECT_TRUE(request.ok()) << request.status();
  absl::StatusOr<SolveResult> solved = Solve(*request);
  EXPECT_TRUE(solved.ok()) << solved.status();
  finished->set_job_id(a.job_id());
  finished->set_unit_id(a.unit().id());
  finished->set_attempt(a.attempt());
  *finished->mutable_result() = ResultToProto(*solved);
  finished->set_next_bound(solved->next_bound);
  return m;
}

v1::JobSpec SplitSpec(const std::string& board, int max_workers) {
  v1::JobSpec spec = Spec(board);
  spec.set_algorithm("idastar");
  spec.set_max_workers(max_workers);
  return spec;
}

// Every event a watch holds now; `*ended` when the final one was among them.
std::vector<v1::JobEvent> Drain(JobWatch& watch, bool* ended = nullptr) {
  std::vector<v1::JobEvent> events;
  bool last = false;
  while (auto e = watch.Next(&last)) {
    events.push_back(*e);
    if (last) break;
  }
  if (ended) *ended = last;
  return events;
}

// Each test runs on both stores (tests/service/each_store.h); those that
// hold SQLite's own write lock are SqliteJobManagerTest.
class JobManagerTest : public testing::EachStore {
 protected:
  void SetUp() override { Restart(); }

  // A new manager over the same store, as after a crash.
  void Restart(ManagerOptions options = Defaults()) {
    manager_.reset();
    store_.reset();
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
    manager_ = std::make_unique<JobManager>(store_.get(), options);
    ASSERT_TRUE(manager_->Start().ok());
  }
  static ManagerOptions Defaults() {
    ManagerOptions o;
    o.recovery_grace = absl::ZeroDuration();
    return o;
  }
  std::shared_ptr<FakeLink> Connect(const std::string& id, int capacity = 1, v1::WorkerHello hello = {}) {
    auto link = std::make_shared<FakeLink>();
    hello.set_worker_id(id);
    hello.set_capacity(capacity);
    EXPECT_TRUE(manager_->Connected(link, hello).ok());
    Settle();
    return link;
  }
  // Waits for the writes made so far and their effects, then checks the
  // manager's invariants.
  void Settle() {
    manager_->Sync();
    EXPECT_TRUE(manager_->CheckInvariants().ok()) << manager_->CheckInvariants();
  }
  // Worker messages, each followed by the store writes they cause and
  // their effects (assignments, events), as a test needs them settled.
  void Receive(FakeLink* link, const v1::WorkerMessage& m) {
    manager_->Received(link, m);
    Settle();
  }
  void Disconnect(FakeLink* link) {
    manager_->Disconnected(link);
    Settle();
  }
  v1::Job Get(const std::string& id, const std::string& tenant = "") { return *manager_->Get(id, tenant); }
  // Answers the units `link` was sent since the last call (`*answered` of
  // them were already), at most `budget`; repeats every fifth answer.
  int AnswerUnits(FakeLink* link, size_t* answered, int budget = INT_MAX) {
    const std::vector<v1::Assignment> sent = link->Assignments();
    int done = 0;
    for (; *answered < sent.size() && done < budget; ++*answered, ++done) {
      const v1::WorkerMessage result = UnitResult(sent[*answered]);
      Receive(link, result);
      if (*answered % 5 == 0) Receive(link, result);
    }
    return done;
  }

  std::unique_ptr<JobStore> store_;
  std::unique_ptr<JobManager> manager_;
};

class SqliteJobManagerTest : public JobManagerTest {};

TEST_P(JobManagerTest, JobRunsOnAWorkerAndItsResultIsStored) {
  const v1::Job job = *manager_->Submit(Spec());
  EXPECT_EQ(job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_THAT(job.id(), HasSubstr("job-"));
  auto watch = *manager_->Watch(job.id());
  auto link = Connect("w1");
  ASSERT_EQ(link->Assignments().size(), 1u);
  const v1::Assignment a = link->Assignments()[0];
  EXPECT_EQ(a.attempt(), 1);
  EXPECT_EQ(a.spec().start().text(), "8 1 3 4 0 2 7 6 5");
  EXPECT_EQ(Get(job.id()).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get(job.id()).worker_id(), "w1");

  v1::WorkerMessage progress;
  progress.mutable_progress()->set_job_id(job.id());
  progress.mutable_progress()->set_attempt(1);
  progress.mutable_progress()->mutable_progress()->set_expanded(42);
  Receive(link.get(), progress);
  EXPECT_EQ(Get(job.id()).progress().expanded(), 42u);
  Receive(link.get(), Finished(a));

  const v1::Job done = *store_->Get(job.id());
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result().moves(), "UD");
  bool ended = false;
  const auto events = Drain(*watch, &ended);
  EXPECT_TRUE(ended);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].state().state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(events[1].state().state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(events[2].progress().expanded(), 42u);
  EXPECT_EQ(events[3].state().state(), v1::JOB_STATE_DONE);
  // A watcher that comes later gets the final state at once.
  auto late = *manager_->Watch(job.id());
  const auto late_events = Drain(*late, &ended);
  EXPECT_TRUE(ended);
  ASSERT_EQ(late_events.size(), 1u);
  EXPECT_EQ(late_events[0].state().result().moves(), "UD");
}

TEST_P(JobManagerTest, SameRequestIdSameJob) {
  v1::JobSpec spec = Spec();
  spec.set_request_id("client-7");
  const v1::Job first = *manager_->Submit(spec);
  const v1::Job again = *manager_->Submit(spec);
  EXPECT_EQ(first.id(), again.id());
  EXPECT_EQ(store_->List("", {}, {}, 100, 0)->jobs.size(), 1u);
}

// A retry under load still gets its job: the request id is looked up
// before the queue's limit; a different spec under the same id is refused.
TEST_P(JobManagerTest, RequestIdsAreLookedUpBeforeAdmission) {
  ManagerOptions o = Defaults();
  o.max_queued = 1;
  o.limits.defaults.set_max_memory_mb(256);
  Restart(o);
  v1::JobSpec spec = Spec();
  spec.set_request_id("retry-me");
  const v1::Job first = *manager_->Submit(spec);
  ASSERT_EQ(manager_->Submit(Spec()).status().code(), absl::StatusCode::kResourceExhausted);  // full
  absl::StatusOr<v1::Job> again = manager_->Submit(spec);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->id(), first.id());

  v1::JobSpec other = spec;
  other.set_algorithm("idastar");
  const absl::Status s = manager_->Submit(other).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(s.message(), HasSubstr(first.id()));
  // Filled-in defaults are not a difference.
  EXPECT_EQ(first.spec().limits().max_memory_mb(), 256u);
}

TEST_P(JobManagerTest, EverySizeAClientControlsIsBounded) {
  struct Case {
    std::string name;
    std::function<void(v1::JobSpec&)> edit;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"65 labels",
       [](v1::JobSpec& s) {
         for (int i = 0; i < 65; ++i) (*s.mutable_labels())[absl::StrCat("k", i)] = "v";
       },
       "labels has 65 entries; at most 64"},
      {"long key", [](v1::JobSpec& s) { (*s.mutable_labels())[std::string(64, 'k')] = "v"; }, "longer than 63 bytes"},
      {"bad key", [](v1::JobSpec& s) { (*s.mutable_labels())["-team"] = "v"; }, "is not a label key"},
      {"long value", [](v1::JobSpec& s) { (*s.mutable_labels())["team"] = std::string(256, 'v'); },
       "at most 255 are allowed"},
      {"huge value", [](v1::JobSpec& s) { (*s.mutable_labels())["team"] = std::string(4 << 20, 'v'); },
       "at most 255 are allowed"},
      {"long request id", [](v1::JobSpec& s) { s.set_request_id(std::string(129, 'r')); },
       "request_id has 129 bytes; at most 128"},
      {"megabyte request id", [](v1::JobSpec& s) { s.set_request_id(std::string(1 << 20, 'r')); }, "request_id"},
      {"lowest priority", [](v1::JobSpec& s) { s.set_priority(INT32_MIN); }, "priority -2147483648 is out of range"},
      {"highest priority", [](v1::JobSpec& s) { s.set_priority(INT32_MAX); }, "priority 2147483647 is out of range"},
  };
  for (const Case& c : cases) {
    v1::JobSpec spec = Spec();
    c.edit(spec);
    const absl::Status s = manager_->Submit(spec).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(s.message(), HasSubstr(c.error)) << c.name;
    EXPECT_LT(s.message().size(), 400u) << c.name << ": the error echoes what it refused";
  }
  // At the bounds, accepted.
  v1::JobSpec edge = Spec();
  for (int i = 0; i < 64; ++i) (*edge.mutable_labels())[absl::StrCat("example.com/k", i)] = std::string(255, 'v');
  (*edge.mutable_labels())["k0"] = "v";
  edge.mutable_labels()->erase("example.com/k63");
  edge.set_request_id(std::string(128, 'r'));
  edge.set_priority(1000000000);
  EXPECT_TRUE(manager_->Submit(edge).ok()) << manager_->Submit(edge).status();
  EXPECT_EQ(store_->List("", {}, {}, 100, 0)->jobs.size(), 1u);

  // Ids from clients are checked before anything echoes them.
  const std::string huge(100000, 'j');
  for (const absl::Status& s : {manager_->Get(huge).status(), manager_->Cancel(huge).status(),
                                manager_->Watch(huge).status(), manager_->Get("job/../x").status()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_LT(s.message().size(), 200u);
  }
  EXPECT_EQ(manager_->Get("job-0000000000000000").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_->List("", {}, {{"-bad", "x"}}, 10, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(JobManagerTest, BadSpecsAreRejectedWithTheReason) {
  v1::JobSpec dup = Spec("1 2 3 4 5 5 7 8 0");
  EXPECT_THAT(manager_->Submit(dup).status().message(), HasSubstr("start: duplicate tile 5"));
  v1::JobSpec algo = Spec();
  algo.set_algorithm("dijkstra");
  const absl::Status s = manager_->Submit(algo).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("unknown algorithm 'dijkstra'"));
  EXPECT_EQ(store_->List("", {}, {}, 100, 0)->jobs.size(), 0u);
}

TEST_P(JobManagerTest, UnsolvableJobsFinishWithoutAWorker) {
  auto link = Connect("w1");
  const v1::Job job = *manager_->Submit(Spec("1 2 3 4 5 6 8 7 0"));
  EXPECT_EQ(job.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(job.result().status(), "unsolvable");
  EXPECT_TRUE(link->Assignments().empty());
}

TEST_P(JobManagerTest, HigherPriorityFirstThenOldestFirst) {
  v1::JobSpec low = Spec(), high = Spec();
  high.set_priority(5);
  const std::string a = manager_->Submit(low)->id();
  const std::string b = manager_->Submit(low)->id();
  const std::string c = manager_->Submit(high)->id();
  auto link = Connect("w1", 1);
  for (const std::string& expected : {c, a, b}) {
    const auto assigned = link->Assignments();
    ASSERT_FALSE(assigned.empty());
    EXPECT_EQ(assigned.back().job_id(), expected);
    Receive(link.get(), Finished(assigned.back()));
  }
}

// At equal priority tenants take turns: a job submitted after another
// tenant's backlog runs second, not last; each tenant's own jobs keep
// their order, and priority still comes first.
TEST_P(JobManagerTest, TenantsTakeTurnsAtEqualPriority) {
  std::vector<std::string> backlog;
  for (int i = 0; i < 200; ++i) backlog.push_back(manager_->Submit(Spec(), "big")->id());
  const std::string small = manager_->Submit(Spec(), "small")->id();
  v1::JobSpec urgent = Spec();
  urgent.set_priority(1);
  const std::string first = manager_->Submit(urgent, "big")->id();
  auto link = Connect("w1", 1);
  std::vector<std::string> order;
  for (int i = 0; i < 5; ++i) {
    const v1::Assignment a = link->Assignments().back();
    order.push_back(a.job_id());
    Receive(link.get(), Finished(a));
  }
  EXPECT_EQ(order, (std::vector<std::string>{first, backlog[0], small, backlog[1], backlog[2]}));
}

// Quotas: queued jobs over a tenant's max_queued are refused naming the
// quota, room comes back as its jobs start; max_running holds a tenant's
// jobs back while other tenants' run.
TEST_P(JobManagerTest, TenantQuotasBindAndAreReleased) {
  ManagerOptions options = Defaults();
  options.quota_of = [](const std::string& tenant) {
    return tenant == "capped" ? TenantQuota{.max_queued = 2, .max_running = 1} : TenantQuota{};
  };
  options.metrics_per_tenant = true;
  Restart(options);
  const std::string c1 = manager_->Submit(Spec(), "capped")->id();
  const std::string c2 = manager_->Submit(Spec(), "capped")->id();
  const absl::Status refused = manager_->Submit(Spec(), "capped").status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(refused.message(), "max_queued")) << refused;
  EXPECT_TRUE(manager_->Submit(Spec("1 2 3 4 5 6 8 7 0"), "capped").ok()) << "unsolvable jobs never queue";
  const std::string other = manager_->Submit(Spec(), "other")->id();

  auto link = Connect("w1", 3);
  EXPECT_EQ(Get(c1, "capped").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get(c2, "capped").state(), v1::JOB_STATE_QUEUED) << "over max_running";
  EXPECT_EQ(Get(other, "other").state(), v1::JOB_STATE_RUNNING);
  const std::string metrics = manager_->metrics().Render();
  EXPECT_EQ(testing::MetricValue(metrics, "npuzzle_tenant_jobs{tenant=\"capped\",state=\"running\"}"), 1);
  EXPECT_EQ(testing::MetricValue(metrics, "npuzzle_tenant_jobs{tenant=\"capped\",state=\"queued\"}"), 1);
  EXPECT_EQ(testing::MetricValue(metrics, "npuzzle_tenant_jobs{tenant=\"other\",state=\"running\"}"), 1);
  const std::string c3 = manager_->Submit(Spec(), "capped")->id();  // c1 started: room for one more
  EXPECT_EQ(manager_->Submit(Spec(), "capped").status().code(), absl::StatusCode::kResourceExhausted);

  for (const v1::Assignment& a : link->Assignments()) {
    if (a.job_id() == c1) Receive(link.get(), Finished(a));
  }
  EXPECT_EQ(Get(c2, "capped").state(), v1::JOB_STATE_RUNNING) << "the running quota was not released";
  EXPECT_EQ(Get(c3, "capped").state(), v1::JOB_STATE_QUEUED);
}

TEST_P(JobManagerTest, CancelQueuedAndRunningJobs) {
  const std::string queued = manager_->Submit(Spec())->id();
  const v1::Job cancelled = *manager_->Cancel(queued);
  EXPECT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(manager_->Cancel(queued).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(manager_->Cancel("job-nope").status().code(), absl::StatusCode::kNotFound);

  auto link = Connect("w1");
  const std::string running = manager_->Submit(Spec())->id();
  ASSERT_EQ(Get(running).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(manager_->Cancel(running)->state(), v1::JOB_STATE_RUNNING);
  ASSERT_EQ(link->Cancels().size(), 1u);
  absl::Notification stopped;
  v1::Job final_job;
  ASSERT_TRUE(manager_
                  ->WhenFinished(running, absl::Seconds(10),
                                 [&](const v1::Job& j) {
                                   final_job = j;
                                   stopped.Notify();
                                 })
                  .ok());
  Receive(link.get(), Finished(link->Assignments().back(), "cancelled"));
  ASSERT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(final_job.state(), v1::JOB_STATE_CANCELLED);
}

TEST_P(JobManagerTest, LostWorkerJobsMoveToAnotherWorkerAndStaleResultsAreIgnored) {
  const std::string id = manager_->Submit(Spec())->id();
  auto first = Connect("w1");
  const v1::Assignment a1 = first->Assignments()[0];
  Disconnect(first.get());
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(Get(id).lost_attempts(), 1);

  auto second = Connect("w2");
  ASSERT_EQ(second->Assignments().size(), 1u);
  const v1::Assignment a2 = second->Assignments()[0];
  EXPECT_EQ(a2.attempt(), 2);
  // The first worker comes back with its old result: too late.
  auto back = Connect("w1", 1);
  Receive(back.get(), Finished(a1));
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_RUNNING);
  Receive(second.get(), Finished(a2));
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(Get(id).worker_id(), "w2");
}

// Of equally free workers, the one that has waited longest takes the next
// job, so idle workers take work in turn, never by where they sit in memory.
TEST_P(JobManagerTest, EquallyFreeWorkersTakeJobsInTurn) {
  std::vector<std::shared_ptr<FakeLink>> links = {Connect("w1"), Connect("w2"), Connect("w3")};
  std::vector<int> order;
  for (int job = 0; job < 6; ++job) {
    ASSERT_TRUE(manager_->Submit(Spec()).ok());
    Settle();
    for (int i = 0; i < 3; ++i) {
      const std::vector<v1::Assignment> sent = links[i]->Assignments();
      if (sent.size() > static_cast<size_t>(std::count(order.begin(), order.end(), i))) {
        order.push_back(i);
        Receive(links[i].get(), Finished(sent.back()));
      }
    }
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST_P(JobManagerTest, JobFailsAfterLosingItsWorkerTooOften) {
  const std::string id = manager_->Submit(Spec())->id();
  for (int i = 0; i < 3; ++i) {
    auto link = Connect("w" + std::to_string(i));
    ASSERT_EQ(link->Assignments().size(), 1u);
    Disconnect(link.get());
  }
  const v1::Job job = Get(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_THAT(job.error(), HasSubstr("lost 3 times"));
}

TEST_P(JobManagerTest, SilentWorkersLoseTheirLease) {
  ManagerOptions o = Defaults();
  o.lease_timeout = absl::Milliseconds(300);
  Restart(o);
  const std::string id = manager_->Submit(Spec())->id();
  auto link = Connect("w1");
  ASSERT_EQ(Get(id).state(), v1::JOB_STATE_RUNNING);
  absl::SleepFor(absl::Milliseconds(800));
  EXPECT_THAT(link->closed(), HasSubstr("lease expired"));
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_QUEUED);
}

// A second worker process given a live worker's id is refused, naming the
// host of the first, which keeps its job; the first process reconnecting
// replaces its old link; and once the first has been silent for a lease
// the id is free for another process.
TEST_P(JobManagerTest, ASecondProcessUnderALiveWorkersIdIsRefused) {
  ManagerOptions o = Defaults();
  o.lease_timeout = absl::Milliseconds(500);
  Restart(o);
  const std::string id = manager_->Submit(Spec())->id();
  v1::WorkerHello first;
  first.set_instance("first");
  first.set_host("host-a");
  auto a = Connect("w1", 1, first);
  ASSERT_EQ(Get(id).worker_id(), "w1");

  v1::WorkerHello second;
  second.set_worker_id("w1");
  second.set_instance("second");
  second.set_host("host-b");
  const absl::Status refused = manager_->Connected(std::make_shared<FakeLink>(), second);
  EXPECT_EQ(refused.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(refused.message(), HasSubstr("worker id 'w1' is in use by a worker on host-a"));
  Settle();
  EXPECT_EQ(a->closed(), "");
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get(id).attempt(), 1);

  auto again = Connect("w1", 1, first);  // the same process, reconnecting
  EXPECT_THAT(a->closed(), HasSubstr("replaced by a new connection"));

  absl::SleepFor(absl::Milliseconds(600));  // silent for a lease
  second.set_worker_id("w1");
  EXPECT_TRUE(manager_->Connected(std::make_shared<FakeLink>(), second).ok());
  Settle();
}

// A worker that finds the job's spec at fault says so, and the failed job
// carries it (RetryJob then refuses it); a lost worker's failure does not.
TEST_P(JobManagerTest, AFailureInTheSpecIsStoredAsPermanent) {
  const v1::Job job = *manager_->Submit(Spec());
  auto link = Connect("w1");
  ASSERT_EQ(link->Assignments().size(), 1u);
  v1::WorkerMessage failed;
  failed.mutable_finished()->set_job_id(job.id());
  failed.mutable_finished()->set_attempt(link->Assignments()[0].attempt());
  failed.mutable_finished()->set_error("pdb_groups: tile 16 is not on a 4x4 board");
  failed.mutable_finished()->set_error_permanent(true);
  Receive(link.get(), failed);
  const v1::Job stored = *store_->Get(job.id());
  EXPECT_EQ(stored.state(), v1::JOB_STATE_FAILED);
  EXPECT_TRUE(stored.error_permanent());
  EXPECT_EQ(stored.error(), "pdb_groups: tile 16 is not on a 4x4 board");
}

// A store whose disk fills up on demand: every commit fails as SQLite's
// does on a full disk, and reads go on working.
class FillableStore : public JobStore {
 public:
  explicit FillableStore(JobStore* real) : real_(real) {}
  void SetFull(bool full) { full_ = full; }
  int refused() const { return refused_; }

  std::vector<absl::Status> Commit(const std::vector<Change>& changes) override {
    if (full_) {
      ++refused_;
      return std::vector<absl::Status>(changes.size(), Full());
    }
    return real_->Commit(changes);
  }
  absl::StatusOr<int64_t> LastSeq() override { return real_->LastSeq(); }
  absl::StatusOr<v1::Job> FindByRequestId(const std::string& tenant, const std::string& request_id) override {
    return real_->FindByRequestId(tenant, request_id);
  }
  absl::StatusOr<v1::Job> Get(const std::string& id) override { return real_->Get(id); }
  absl::StatusOr<std::vector<Row>> Unfinished() override { return real_->Unfinished(); }
  absl::StatusOr<Page> List(const std::string& tenant, const std::vector<v1::JobState>& states,
                            const std::map<std::string, std::string>& labels, int page_size, int64_t before) override {
    return real_->List(tenant, states, labels, page_size, before);
  }
  absl::StatusOr<std::map<v1::JobState, int64_t>> CountByState() override { return real_->CountByState(); }
  absl::Status CheckWritable(absl::Duration wait) override { return full_ ? Full() : real_->CheckWritable(wait); }
  absl::StatusOr<int> PurgeFinished(absl::Time now, absl::Duration retain, int limit) override {
    if (full_) return Full();
    return real_->PurgeFinished(now, retain, limit);
  }
  absl::StatusOr<Usage> DiskUsage() override { return real_->DiskUsage(); }
  const std::string& Secret() const override { return real_->Secret(); }
  absl::Status DeleteFinished(const std::string& id) override { return full_ ? Full() : real_->DeleteFinished(id); }

 private:
  static absl::Status Full() { return absl::UnavailableError("job store: commit: database or disk is full"); }
  JobStore* const real_;
  std::atomic<bool> full_{false};
  std::atomic<int> refused_{0};
};

// While the disk is full a submit fails UNAVAILABLE (a client may retry),
// the queued job is tried on its worker at most once a second, doubling,
// instead of going round as fast as the store fails, and it uses up no
// attempt numbers; once the disk has room it runs, and no failed commit
// was counted as one.
TEST_P(JobManagerTest, AFullDiskPausesAssignmentsWithoutUsingUpAttempts) {
  FillableStore store(store_.get());
  manager_ = std::make_unique<JobManager>(&store, Defaults());
  ASSERT_TRUE(manager_->Start().ok());
  const std::string id = manager_->Submit(Spec())->id();
  store.SetFull(true);
  const absl::StatusOr<v1::Job> refused = manager_->Submit(Spec());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(refused.status().message(), HasSubstr("disk is full"));
  const auto commits = [&] {
    return testing::MetricValue(manager_->metrics().Render(), "npuzzle_store_commits_total");
  };
  const std::optional<double> commits_before = commits();

  auto link = Connect("w1");
  absl::SleepFor(absl::Milliseconds(2500));
  Settle();
  EXPECT_LE(link->Assignments().size(), 1u);
  // Tried at about 0, 1 and 3 seconds: each try is an assignment and a requeue.
  EXPECT_LE(store.refused(), 8) << "assignments went round while the store failed";
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(commits(), commits_before);
  EXPECT_GE(testing::MetricValue(manager_->metrics().Render(), "npuzzle_store_commit_failures_total"), 1);

  store.SetFull(false);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (Get(id).state() != v1::JOB_STATE_RUNNING && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  Settle();
  ASSERT_EQ(Get(id).state(), v1::JOB_STATE_RUNNING);
  EXPECT_LE(Get(id).attempt(), 2);
  const std::vector<v1::Assignment> sent = link->Assignments();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent.back().attempt(), Get(id).attempt());
  manager_.reset();  // before the store it writes to
}

// Only a finished job of the caller's may be deleted; a running one is
// refused (cancel it first), and another tenant's is NOT_FOUND.
TEST_P(JobManagerTest, DeleteTakesOnlyTheCallersFinishedJobs) {
  auto link = Connect("w1");
  const std::string id = manager_->Submit(Spec(), "alice")->id();
  ASSERT_EQ(Get(id, "alice").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(manager_->Delete(id, "alice").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(manager_->Delete(id, "alice").message(), HasSubstr("has not finished: cancel it first"));
  Receive(link.get(), Finished(link->Assignments().back(), "solved"));
  ASSERT_EQ(Get(id, "alice").state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(manager_->Delete(id, "bob").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(manager_->Delete(id, "alice").ok());
  EXPECT_EQ(manager_->Get(id, "alice").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_->Delete(id, "alice").code(), absl::StatusCode::kNotFound);
}

TEST_P(JobManagerTest, ReleasedJobsGoBackWithoutPenalty) {
  const std::string id = manager_->Submit(Spec())->id();
  auto link = Connect("w1");
  v1::WorkerMessage released;
  released.mutable_released()->set_job_id(id);
  released.mutable_released()->set_attempt(1);
  v1::WorkerMessage draining;
  draining.set_draining(true);
  Receive(link.get(), draining);
  Receive(link.get(), released);
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(Get(id).lost_attempts(), 0);
  EXPECT_EQ(link->Assignments().size(), 1u);  // draining: nothing new
}

v1::WorkerMessage CheckpointOf(const v1::Assignment& a, int bound, uint64_t expanded) {
  v1::WorkerMessage m;
  m.mutable_checkpoint()->set_job_id(a.job_id());
  m.mutable_checkpoint()->set_attempt(a.attempt());
  m.mutable_checkpoint()->mutable_checkpoint()->set_bound(bound);
  m.mutable_checkpoint()->mutable_checkpoint()->set_expanded(expanded);
  return m;
}

// A lost attempt's last finished threshold is stored, and the next attempt
// starts there, on another worker or after a coordinator restart; an
// earlier (reordered) or stale attempt's checkpoint changes nothing.
TEST_P(JobManagerTest, CheckpointsAreStoredAndTheNextAttemptResumes) {
  const v1::Job job = *manager_->Submit(Spec());
  auto w1 = Connect("w1");
  const v1::Assignment first = w1->Assignments().at(0);
  EXPECT_FALSE(first.has_checkpoint());
  Receive(w1.get(), CheckpointOf(first, 30, 1000));
  Receive(w1.get(), CheckpointOf(first, 32, 5000));
  Receive(w1.get(), CheckpointOf(first, 30, 9999));
  EXPECT_EQ(store_->Get(job.id())->checkpoint().bound(), 32);
  EXPECT_EQ(store_->Get(job.id())->checkpoint().expanded(), 5000u);
  EXPECT_EQ(Get(job.id()).checkpoint().bound(), 32);

  Disconnect(w1.get());
  auto w2 = Connect("w2");
  const v1::Assignment second = w2->Assignments().at(0);
  EXPECT_EQ(second.attempt(), 2);
  EXPECT_EQ(second.checkpoint().bound(), 32);
  EXPECT_EQ(second.checkpoint().expanded(), 5000u);
  Receive(w2.get(), CheckpointOf(first, 40, 1));  // attempt 1 is over
  EXPECT_EQ(Get(job.id()).checkpoint().bound(), 32);
  Receive(w2.get(), CheckpointOf(second, 34, 8000));

  Restart();  // the coordinator dies too
  auto w3 = Connect("w3");
  const v1::Assignment third = w3->Assignments().at(0);
  EXPECT_EQ(third.checkpoint().bound(), 34);
  EXPECT_EQ(third.checkpoint().expanded(), 8000u);
  Receive(w3.get(), Finished(third));
  EXPECT_EQ(store_->Get(job.id())->state(), v1::JOB_STATE_DONE);
}

TEST_P(JobManagerTest, SplitJobRunsOnSeveralWorkersSurvivesALostOneAndEndsOnce) {
  // 31 moves: a dozen thresholds of a hundred units each.
  const v1::Job job = *manager_->Submit(SplitSpec("8 6 7 2 5 4 3 0 1", 3));
  auto watch = *manager_->Watch(job.id());
  std::vector<std::shared_ptr<FakeLink>> links = {Connect("w1"), Connect("w2"), Connect("w3"), Connect("w4")};
  // max_workers 3: one worker waits.
  int out = 0;
  for (auto& link : links) out += static_cast<int>(link->Assignments().size());
  EXPECT_EQ(out, 3);
  EXPECT_EQ(Get(job.id()).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get(job.id()).worker_id(), "");
  for (auto& link : links) {
    for (const v1::Assignment& a : link->Assignments()) {
      EXPECT_TRUE(a.has_unit());
      EXPECT_EQ(a.job_id(), job.id());
      EXPECT_GT(a.unit().id(), 0);
      EXPECT_EQ(a.spec().max_workers(), 0);
      EXPECT_EQ(a.spec().threads(), 1);
    }
  }
  std::vector<size_t> answered(links.size(), 0);
  std::optional<size_t> lost;
  for (int round = 0; round < 100000 && store_->Get(job.id())->state() == v1::JOB_STATE_RUNNING; ++round) {
    int progress = 0;
    for (size_t i = 0; i < links.size(); ++i) {
      if (i != lost) progress += AnswerUnits(links[i].get(), &answered[i], 1);
    }
    if (!lost && Get(job.id()).checkpoint().bound() > 20) {
      // A worker dies with a unit out: it goes to another worker.
      for (size_t i = 0; i < links.size() && !lost; ++i) {
        if (links[i]->Assignments().size() > answered[i]) lost = i;
      }
      ASSERT_TRUE(lost) << "no unit out while the job runs";
      Disconnect(links[*lost].get());
    }
    ASSERT_GT(progress, 0) << "no unit out while the job runs";
  }
  ASSERT_TRUE(lost);
  const v1::Job done = *store_->Get(job.id());
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result().status(), "solved");
  EXPECT_EQ(done.result().length(), 31);
  EXPECT_TRUE(done.result().optimal());
  EXPECT_EQ(done.result().stats().workers(), 4);
  EXPECT_GT(done.result().stats().work_units(), 300);
  EXPECT_GE(done.checkpoint().bound(), 29);
  EXPECT_EQ(done.lost_attempts(), 0);
  EXPECT_EQ(manager_->Counts().running, 0);
  bool ended = false;
  const auto events = Drain(*watch, &ended);
  EXPECT_TRUE(ended);
  int finals = 0;
  bool saw_units = false;
  for (const v1::JobEvent& e : events) {
    finals += e.has_state() && e.state().state() == v1::JOB_STATE_DONE;
    saw_units |= e.has_progress() && e.progress().units_total() > 0 && e.progress().workers() > 0;
  }
  EXPECT_EQ(finals, 1);
  EXPECT_TRUE(saw_units);
}

// The end of a threshold: one worker idle, the other's unit still
// running. Its progress brings a request for part of it back; what it
// hands back goes to the idle worker at once, and the answer is as short.
TEST_P(JobManagerTest, AnIdleWorkerGetsWhatALongUnitHandsBack) {
  const v1::Job job = *manager_->Submit(SplitSpec("8 6 7 2 5 4 3 0 1", 2));
  auto w1 = Connect("w1");
  auto w2 = Connect("w2");
  size_t answered1 = 0, answered2 = 0;
  // On to the threshold before the solution's (29), and to a unit there
  // with nodes below its root to hand back.
  std::optional<v1::Assignment> long_unit;
  v1::WorkerMessage handed_back;
  v1::WorkerMessage long_result;
  for (int round = 0; round < 100000 && !long_unit; ++round) {
    ASSERT_EQ(Get(job.id()).state(), v1::JOB_STATE_RUNNING);
    const v1::Assignment a = w1->Assignments().at(answered1);
    if (Get(job.id()).progress().bound() >= 29) {
      handed_back.Clear();
      long_result = UnitResult(a, &handed_back);
      if (handed_back.handed_back().prefixes_size() > 0) {
        long_unit = a;
        break;
      }
    }
    ASSERT_GT(AnswerUnits(w1.get(), &answered1, 1) + AnswerUnits(w2.get(), &answered2, 1), 0);
  }
  ASSERT_TRUE(long_unit);
  const int threshold = Get(job.id()).progress().bound();
  while (AnswerUnits(w2.get(), &answered2, 1) > 0) {
  }
  ASSERT_EQ(Get(job.id()).state(), v1::JOB_STATE_RUNNING);
  ASSERT_EQ(Get(job.id()).progress().bound(), threshold);
  const int units = Get(job.id()).progress().units_total();
  EXPECT_EQ(Get(job.id()).progress().units_done(), units - 1);

  // A unit that has searched little is not worth cutting.
  v1::WorkerMessage progress;
  progress.mutable_progress()->set_job_id(long_unit->job_id());
  progress.mutable_progress()->set_unit_id(long_unit->unit().id());
  progress.mutable_progress()->set_attempt(long_unit->attempt());
  progress.mutable_progress()->mutable_progress()->set_expanded(1000);
  Receive(w1.get(), progress);
  EXPECT_TRUE(w1->HandBacks().empty());
  progress.mutable_progress()->mutable_progress()->set_expanded(500000);
  Receive(w1.get(), progress);
  ASSERT_EQ(w1->HandBacks().size(), 1u);
  EXPECT_EQ(w1->HandBacks()[0].job_id(), long_unit->job_id());
  EXPECT_EQ(w1->HandBacks()[0].unit_id(), long_unit->unit().id());
  EXPECT_EQ(w1->HandBacks()[0].attempt(), long_unit->attempt());
  Receive(w1.get(), progress);
  EXPECT_EQ(w1->HandBacks().size(), 1u) << "asked again at once";

  const int given = handed_back.handed_back().prefixes_size();
  Receive(w1.get(), handed_back);
  EXPECT_EQ(testing::MetricValue(manager_->metrics().Render(), "npuzzle_split_units_handed_back_total"), given);
  EXPECT_EQ(Get(job.id()).progress().units_total(), units + given);
  ASSERT_EQ(w2->Assignments().size(), answered2 + 1) << "the idle worker got nothing";
  const v1::Assignment taken = w2->Assignments().back();
  EXPECT_EQ(taken.unit().prefix(), handed_back.handed_back().prefixes(0));
  EXPECT_THAT(taken.unit().prefix(), ::testing::StartsWith(long_unit->unit().prefix()));
  // Repeated, as a worker does after reconnecting: counted once.
  Receive(w1.get(), handed_back);
  EXPECT_EQ(Get(job.id()).progress().units_total(), units + given);
  EXPECT_EQ(testing::MetricValue(manager_->metrics().Render(), "npuzzle_split_units_handed_back_total"), given);

  Receive(w1.get(), long_result);
  ++answered1;
  for (int round = 0; round < 100000 && store_->Get(job.id())->state() == v1::JOB_STATE_RUNNING; ++round) {
    ASSERT_GT(AnswerUnits(w1.get(), &answered1, 1) + AnswerUnits(w2.get(), &answered2, 1), 0);
  }
  const v1::Job done = *store_->Get(job.id());
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result().status(), "solved");
  EXPECT_EQ(done.result().length(), 31);
  EXPECT_TRUE(done.result().optimal());
}

// A worker that hands back what does not lie below its unit has left part
// of the unit unsearched: the job fails, saying so, and nothing else does.
TEST_P(JobManagerTest, ASubtreeHandedBackFromOutsideItsUnitFailsTheJob) {
  const v1::Job job = *manager_->Submit(SplitSpec("8 6 7 2 5 4 3 0 1", 2));
  auto w1 = Connect("w1");
  const v1::Assignment unit = w1->Assignments()[0];
  std::string outside = unit.unit().prefix();
  outside.pop_back();
  v1::WorkerMessage m;
  m.mutable_handed_back()->set_job_id(unit.job_id());
  m.mutable_handed_back()->set_unit_id(unit.unit().id());
  m.mutable_handed_back()->set_attempt(unit.attempt());
  m.mutable_handed_back()->add_prefixes(outside);
  Receive(w1.get(), m);
  const v1::Job failed = *store_->Get(job.id());
  EXPECT_EQ(failed.state(), v1::JOB_STATE_FAILED);
  EXPECT_THAT(failed.error(), HasSubstr("handed back " + outside + ", not below it"));
  // Its worker is free for the next job.
  EXPECT_EQ(manager_->Submit(Spec())->state(), v1::JOB_STATE_RUNNING);
}

TEST_P(JobManagerTest, CancellingASplitJobStopsEveryUnitOutAndFreesTheirWorkers) {
  const v1::Job job = *manager_->Submit(SplitSpec("8 6 7 2 5 4 3 0 1", 2));
  auto w1 = Connect("w1");
  auto w2 = Connect("w2");
  ASSERT_EQ(w1->Assignments().size(), 1u);
  ASSERT_EQ(w2->Assignments().size(), 1u);
  EXPECT_EQ(manager_->Counts().running, 2);
  EXPECT_EQ(manager_->Cancel(job.id())->state(), v1::JOB_STATE_CANCELLED);
  Settle();
  for (FakeLink* link : {w1.get(), w2.get()}) {
    ASSERT_EQ(link->Cancels().size(), 1u);
    EXPECT_EQ(link->Cancels()[0].job_id(), link->Assignments()[0].job_id());
    EXPECT_EQ(link->Cancels()[0].unit_id(), link->Assignments()[0].unit().id());
  }
  EXPECT_EQ(manager_->Counts().running, 0);
  // Their answers come after the end: ignored, and the workers take new work.
  Receive(w1.get(), UnitResult(w1->Assignments()[0]));
  Receive(w2.get(), Finished(w2->Assignments()[0], "cancelled"));
  EXPECT_EQ(store_->Get(job.id())->state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(store_->Get(job.id())->result().status(), "cancelled");
  const std::string next = manager_->Submit(Spec())->id();
  Settle();
  EXPECT_EQ(Get(next).state(), v1::JOB_STATE_RUNNING);
}

// The gauges see units: each worker's lease and rate, and how many more
// workers a split job could use, which the autoscaler adds to the queue.
TEST_P(JobManagerTest, SplitJobsShowInWorkerGaugesAndAskForMoreWorkers) {
  using testing::MetricValue;
  auto metric = [&](const std::string& series) { return MetricValue(manager_->metrics().Render(), series); };
  const v1::Job job = *manager_->Submit(SplitSpec("8 6 7 2 5 4 3 0 1", 3));
  auto w1 = Connect("w1");
  ASSERT_EQ(w1->Assignments().size(), 1u);
  EXPECT_EQ(metric("npuzzle_queue_depth"), 0);
  EXPECT_EQ(metric("npuzzle_split_workers_wanted"), 2);
  auto w2 = Connect("w2");
  EXPECT_EQ(metric("npuzzle_split_workers_wanted"), 1);
  EXPECT_EQ(metric("npuzzle_coordinator_worker_running_jobs{worker=\"w1\"}"), 1);
  EXPECT_FALSE(absl::StrContains(manager_->metrics().Render(), "npuzzle_tenant_jobs{"))
      << "tenant names on /metrics without --metrics-tenants";

  v1::WorkerMessage progress;
  progress.mutable_progress()->set_job_id(w1->Assignments()[0].job_id());
  progress.mutable_progress()->set_unit_id(w1->Assignments()[0].unit().id());
  progress.mutable_progress()->set_attempt(w1->Assignments()[0].attempt());
  progress.mutable_progress()->mutable_progress()->set_nodes_per_second(700);
  Receive(w1.get(), progress);
  EXPECT_EQ(metric("npuzzle_coordinator_worker_node_rate{worker=\"w1\"}"), 700);
  EXPECT_EQ(metric("npuzzle_coordinator_worker_node_rate{worker=\"w2\"}"), 0);

  ASSERT_TRUE(manager_->Cancel(job.id()).ok());
  Settle();
  EXPECT_EQ(metric("npuzzle_split_workers_wanted"), 0);
  EXPECT_EQ(metric("npuzzle_coordinator_worker_node_rate{worker=\"w1\"}"), 0);
}

// A free worker takes a queued job of higher priority before the next unit
// of a running split job, and the unit before a queued job of its own.
TEST_P(JobManagerTest, SplitJobsUnitsYieldOnlyToQueuedJobsOfHigherPriority) {
  const std::string split = manager_->Submit(SplitSpec("8 6 7 2 5 4 3 0 1", 2))->id();
  auto w1 = Connect("w1");
  v1::JobSpec urgent_spec = Spec();
  urgent_spec.set_priority(5);
  const std::string urgent = manager_->Submit(urgent_spec)->id();
  EXPECT_EQ(Get(urgent).state(), v1::JOB_STATE_QUEUED);
  size_t answered = 0;
  ASSERT_EQ(AnswerUnits(w1.get(), &answered, 1), 1);
  EXPECT_EQ(w1->Assignments().back().job_id(), urgent);
  Receive(w1.get(), Finished(w1->Assignments().back()));
  EXPECT_TRUE(w1->Assignments().back().has_unit());
  const std::string later = manager_->Submit(Spec())->id();
  answered = w1->Assignments().size() - 1;
  ASSERT_EQ(AnswerUnits(w1.get(), &answered, 1), 1);
  EXPECT_TRUE(w1->Assignments().back().has_unit());
  EXPECT_EQ(Get(later).state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(Get(split).state(), v1::JOB_STATE_RUNNING);
}

TEST_P(JobManagerTest, SplitJobsRefuseAlgorithmsThatCannotSplitAndBoundMaxWorkers) {
  v1::JobSpec spec = SplitSpec("8 6 7 2 5 4 3 0 1", 2);
  spec.set_algorithm("astar");
  EXPECT_THAT(manager_->Submit(spec).status().message(),
              HasSubstr("max_workers above 1 applies only to iddfs, idastar, not to astar"));
  spec.set_algorithm("idastar");
  spec.set_max_workers(1001);
  EXPECT_THAT(manager_->Submit(spec).status().message(), HasSubstr("max_workers 1001 is out of range (0 to 1000)"));
  spec.set_max_workers(-1);
  EXPECT_EQ(manager_->Submit(spec).status().code(), absl::StatusCode::kInvalidArgument);
}

// The coordinator dies mid-job: the job runs again, split, from the last
// threshold it stored, and unit results of the old run are ignored.
TEST_P(JobManagerTest, ASplitJobResumesAtItsCheckpointAfterACoordinatorRestart) {
  const std::string id = manager_->Submit(SplitSpec("8 6 7 2 5 4 3 0 1", 2))->id();
  auto w1 = Connect("w1");
  size_t answered = 0;
  while (store_->Get(id)->checkpoint().bound() < 25) ASSERT_GT(AnswerUnits(w1.get(), &answered, 1), 0);
  const v1::Checkpoint stored = store_->Get(id)->checkpoint();
  const v1::Assignment stale = w1->Assignments().back();
  Restart();
  auto w2 = Connect("w2");
  Receive(w2.get(), UnitResult(stale));  // a unit of the run before
  size_t answered2 = 0;
  while (store_->Get(id)->state() == v1::JOB_STATE_RUNNING) ASSERT_GT(AnswerUnits(w2.get(), &answered2), 0);
  const v1::Job done = *store_->Get(id);
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result().length(), 31);
  EXPECT_EQ(done.result().stats().resumed_from_bound(), stored.bound());
  EXPECT_GE(done.result().stats().expanded(), stored.expanded());
  EXPECT_GE(done.attempt(), 2);
  EXPECT_EQ(w2->Assignments().front().unit().bound(), stored.bound());
}

TEST_P(JobManagerTest, AfterARestartReconnectingWorkersKeepTheirJobs) {
  const std::string kept = manager_->Submit(Spec())->id();
  const std::string done = manager_->Submit(Spec())->id();
  const std::string queued = manager_->Submit(Spec())->id();
  auto link = Connect("w1", 2);
  ASSERT_EQ(link->Assignments().size(), 2u);
  const v1::Assignment a_done = link->Assignments()[1];

  Restart();  // the coordinator died; the worker did not
  EXPECT_EQ(Get(kept).state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(Get(done).state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(Get(queued).state(), v1::JOB_STATE_QUEUED);
  v1::WorkerHello hello;
  v1::RunningJob* r = hello.add_running();
  r->set_job_id(kept);
  r->set_attempt(1);
  *hello.add_finished() = Finished(a_done).finished();
  auto again = Connect("w1", 2, hello);
  EXPECT_EQ(Get(kept).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get(kept).attempt(), 1);
  EXPECT_EQ(Get(done).state(), v1::JOB_STATE_DONE);
  // Its free slot takes the job that was waiting.
  ASSERT_EQ(again->Assignments().size(), 1u);
  EXPECT_EQ(again->Assignments()[0].job_id(), queued);
}

// A drained coordinator's running jobs wait for their own worker after a
// restart, exactly as a crashed one's do: another worker cannot take them
// during the grace period.
TEST_P(JobManagerTest, DrainedRunningJobsWaitForTheirWorkerAfterARestart) {
  ManagerOptions o = Defaults();
  o.recovery_grace = absl::Seconds(30);
  Restart(o);
  const std::string id = manager_->Submit(Spec())->id();
  auto link = Connect("w1");
  ASSERT_EQ(link->Assignments().size(), 1u);
  manager_->Drain(absl::ZeroDuration());

  Restart(o);
  auto other = Connect("w2");
  EXPECT_TRUE(other->Assignments().empty()) << "another worker took a job whose worker may come back";
  v1::WorkerHello hello;
  v1::RunningJob* r = hello.add_running();
  r->set_job_id(id);
  r->set_attempt(1);
  auto again = Connect("w1", 1, hello);
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get(id).worker_id(), "w1");
  EXPECT_EQ(Get(id).attempt(), 1);
}

// The manager's lock is never held across a commit: while one waits for
// the disk, everything else still answers. A worker hears of its job
// while the job's commit is under way (its search overlaps the sync), but
// its result is reported to no one before it is stored, even when it
// arrives first.
TEST_P(SqliteJobManagerTest, NothingWaitsForADiskCommitButWhatNeedsIt) {
  const std::string earlier = manager_->Submit(Spec())->id();
  auto link = Connect("w1", 2);
  ASSERT_EQ(link->Assignments().size(), 1u);

  auto held = std::make_unique<StoreWriteLock>(dir_.path() + "/jobs.db");
  absl::Notification answered;
  absl::StatusOr<v1::Job> submitted;
  std::thread client([&] {
    submitted = manager_->Submit(Spec("1 2 3 4 5 6 7 0 8"));
    answered.Notify();
  });
  const absl::Time deadline = absl::Now() + absl::Seconds(2);
  while (link->Assignments().size() < 2 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_EQ(link->Assignments().size(), 2u) << "the assignment waited for the commit";
  const v1::Assignment a = link->Assignments()[1];
  EXPECT_FALSE(answered.HasBeenNotified()) << "the client heard of a job not yet stored";

  // Everything else answers while the commit waits.
  const absl::Time asked = absl::Now();
  EXPECT_EQ(Get(earlier).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(manager_->Counts().running, 2);
  auto watch = *manager_->Watch(a.job_id());
  manager_->Received(link.get(), Finished(a));
  EXPECT_LT(absl::Now() - asked, absl::Seconds(1));

  // The result arrived first, but nobody hears of it until it is stored.
  EXPECT_EQ(Get(a.job_id()).state(), v1::JOB_STATE_RUNNING);
  bool ended = false;
  Drain(*watch, &ended);
  EXPECT_FALSE(ended);
  EXPECT_TRUE(absl::IsNotFound(store_->Get(a.job_id()).status()));

  held->Release();
  client.join();
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_NE(submitted->state(), v1::JOB_STATE_DONE);
  manager_->Sync();
  EXPECT_EQ(store_->Get(a.job_id())->state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(Get(a.job_id()).result().moves(), "UD");
  const auto events = Drain(*watch, &ended);
  EXPECT_TRUE(ended);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().state().state(), v1::JOB_STATE_DONE);
}

// Changes made while a commit is under way share the next one.
TEST_P(JobManagerTest, ConcurrentChangesShareCommits) {
  constexpr int kJobs = 200;
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < kJobs / 8; ++i) ASSERT_TRUE(manager_->Submit(Spec()).ok());
    });
  }
  for (std::thread& t : clients) t.join();
  const std::string metrics = manager_->metrics().Render();
  const double commits = testing::MetricValue(metrics, "npuzzle_store_commits_total").value_or(-1);
  const double writes = testing::MetricValue(metrics, "npuzzle_store_writes_total").value_or(-1);
  EXPECT_EQ(writes, kJobs);
  EXPECT_LT(commits, kJobs) << "no two submissions shared a commit";
  EXPECT_GE(commits, 1);
}

// An attempt may go out ahead of its commit; if the coordinator dies
// before the commit, its successor never gives that attempt's number to
// another run of the job.
TEST_P(SqliteJobManagerTest, AnAttemptNumberIsNeverGivenTwice) {
  const std::string id = manager_->Submit(Spec())->id();
  manager_.reset();
  store_.reset();
  // The crash happens in a child process: it sends attempt 2 while the
  // commit that stores it waits for the write lock, and dies there.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = *SqliteJobStore::Open(dir_.path() + "/jobs.db");
    auto manager = std::make_unique<JobManager>(store.get(), Defaults());
    if (!manager->Start().ok()) _exit(2);
    auto w1 = std::make_shared<FakeLink>();
    v1::WorkerHello hello;
    hello.set_worker_id("w1");
    if (!manager->Connected(w1, hello).ok()) _exit(3);
    manager->Sync();
    manager->Disconnected(w1.get());  // attempt 1 lost; the job is queued again
    manager->Sync();
    StoreWriteLock held(dir_.path() + "/jobs.db");
    auto w2 = std::make_shared<FakeLink>();
    hello.set_worker_id("w2");
    std::thread([&] { (void)manager->Connected(w2, hello); }).detach();
    for (int i = 0; i < 2000 && w2->Assignments().empty(); ++i) absl::SleepFor(absl::Milliseconds(1));
    // Exits with the attempt w2 was sent, as its commit waits.
    _exit(w2->Assignments().size() == 1 ? w2->Assignments()[0].attempt() : 100);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  const int sent = WEXITSTATUS(status);
  ASSERT_LT(sent, 100) << "the child did not send the attempt ahead of its commit";

  Restart();
  EXPECT_EQ(Get(id).attempt(), sent - 1) << "the stored attempt is the one before";
  auto w3 = Connect("w3");
  ASSERT_EQ(w3->Assignments().size(), 1u);
  EXPECT_GT(w3->Assignments()[0].attempt(), sent) << "that attempt may still be running on w2";
}

// A job that was running when the coordinator died, whose worker does not
// come back for it within the recovery grace, lost that worker: it counts.
TEST_P(JobManagerTest, AJobWhoseWorkerNeverReturnsAfterARestartCountsAsLost) {
  ManagerOptions o = Defaults();
  o.max_lost_attempts = 2;
  Restart(o);
  const std::string id = manager_->Submit(Spec())->id();
  auto w1 = Connect("w1");
  ASSERT_EQ(w1->Assignments().size(), 1u);
  Restart(o);  // w1 never reconnects
  auto w2 = Connect("w2");
  ASSERT_EQ(w2->Assignments().size(), 1u);
  EXPECT_EQ(Get(id).lost_attempts(), 1);
  EXPECT_EQ(Get(id).worker_id(), "w2");
  Restart(o);  // nor does w2: the second loss fails the job
  auto w3 = Connect("w3");
  EXPECT_TRUE(w3->Assignments().empty());
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_FAILED);
  EXPECT_THAT(Get(id).error(), HasSubstr("lost 2 times"));
}

TEST_P(JobManagerTest, QueueLimitAndLimitCeilings) {
  ManagerOptions o = Defaults();
  o.max_queued = 2;
  o.limits.defaults.set_max_memory_mb(256);
  o.limits.ceilings.set_max_memory_mb(1024);
  Restart(o);
  const v1::Job job = *manager_->Submit(Spec());
  EXPECT_EQ(job.spec().limits().max_memory_mb(), 256u);
  ASSERT_TRUE(manager_->Submit(Spec()).ok());
  EXPECT_EQ(manager_->Submit(Spec()).status().code(), absl::StatusCode::kResourceExhausted);
  v1::JobSpec big = Spec();
  big.mutable_limits()->set_max_memory_mb(4096);
  EXPECT_THAT(manager_->Submit(big).status().message(),
              HasSubstr("limits.max_memory_mb 4096 exceeds this service's ceiling of 1024"));
}

TEST_P(JobManagerTest, SlowWatchersGetEveryStateAndTheResult) {
  const std::string id = manager_->Submit(Spec())->id();
  auto watch = *manager_->Watch(id);
  auto link = Connect("w1");
  const v1::Assignment a = link->Assignments()[0];
  for (int i = 0; i < 10000; ++i) {
    v1::WorkerMessage p;
    p.mutable_progress()->set_job_id(id);
    p.mutable_progress()->set_attempt(1);
    p.mutable_progress()->mutable_progress()->set_expanded(i);
    Receive(link.get(), p);
  }
  Receive(link.get(), Finished(a));
  bool ended = false;
  const auto events = Drain(*watch, &ended);
  EXPECT_TRUE(ended);
  EXPECT_LE(events.size(), JobWatch::kMaxBacklog + 1);
  EXPECT_EQ(events.back().state().state(), v1::JOB_STATE_DONE);
  // The newest progress survives the collapsing.
  EXPECT_EQ(events[events.size() - 2].progress().expanded(), 9999u);
}

TEST_P(JobManagerTest, ListsNewestFirstInPagesByStateAndLabel) {
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) {
    v1::JobSpec spec = Spec();
    (*spec.mutable_labels())["team"] = i % 2 ? "odd" : "even";
    ids.push_back(manager_->Submit(spec)->id());
  }
  ASSERT_TRUE(manager_->Cancel(ids[6]).ok());
  auto page1 = *manager_->List("", {}, {}, 3, 0);
  ASSERT_EQ(page1.jobs.size(), 3u);
  EXPECT_EQ(page1.jobs[0].id(), ids[6]);
  EXPECT_EQ(page1.jobs[2].id(), ids[4]);
  auto page2 = *manager_->List("", {}, {}, 3, page1.next_before);
  EXPECT_EQ(page2.jobs[0].id(), ids[3]);
  auto page3 = *manager_->List("", {}, {}, 3, page2.next_before);
  EXPECT_EQ(page3.jobs.size(), 1u);
  EXPECT_EQ(page3.next_before, 0);
  auto odd = *manager_->List("", {}, {{"team", "odd"}}, 10, 0);
  EXPECT_EQ(odd.jobs.size(), 3u);
  auto cancelled = *manager_->List("", {v1::JOB_STATE_CANCELLED}, {}, 10, 0);
  ASSERT_EQ(cancelled.jobs.size(), 1u);
  EXPECT_EQ(cancelled.jobs[0].id(), ids[6]);
}

// Tenants: each sees only its own jobs, another's id looks unknown, and
// request ids are scoped to the tenant.
TEST_P(JobManagerTest, TenantsSeeOnlyTheirOwnJobs) {
  v1::JobSpec spec = Spec();
  spec.set_request_id("same");
  const v1::Job a = *manager_->Submit(spec, "alpha");
  const v1::Job b = *manager_->Submit(spec, "beta");
  EXPECT_NE(a.id(), b.id());
  EXPECT_EQ(a.tenant(), "alpha");
  EXPECT_EQ(manager_->Submit(spec, "alpha")->id(), a.id());

  const absl::Status unknown = manager_->Get("no-such-job", "beta").status();
  for (const absl::Status& s : {manager_->Get(a.id(), "beta").status(), manager_->Cancel(a.id(), "beta").status(),
                                manager_->Watch(a.id(), "beta").status(), manager_->Get(a.id()).status()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(s.message(), absl::StrCat("no job with id '", a.id(), "'"));
  }
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_->Get(a.id(), "alpha")->state(), v1::JOB_STATE_QUEUED) << "beta's cancel reached it";
  EXPECT_TRUE(manager_->Watch(a.id(), "alpha").ok());

  for (const auto& [tenant, id] : {std::pair{"alpha", a.id()}, std::pair{"beta", b.id()}}) {
    const JobStore::Page page = *manager_->List(tenant, {}, {}, 10, 0);
    ASSERT_EQ(page.jobs.size(), 1u) << tenant;
    EXPECT_EQ(page.jobs[0].id(), id);
  }
  EXPECT_TRUE(manager_->List("", {}, {}, 10, 0)->jobs.empty());
}

TEST_P(JobManagerTest, MetricsCountWhatHappened) {
  using testing::MetricValue;
  auto metric = [&](const std::string& series) { return MetricValue(manager_->metrics().Render(), series); };
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(manager_->Submit(Spec())->id());
  ASSERT_TRUE(manager_->Submit(Spec("1 2 3 4 5 6 8 7 0")).ok());  // unsolvable: done at once
  EXPECT_EQ(metric("npuzzle_jobs_submitted_total"), 5);
  EXPECT_EQ(metric("npuzzle_queue_depth"), 4);
  EXPECT_EQ(metric("npuzzle_jobs{state=\"queued\"}"), 4);
  EXPECT_EQ(metric("npuzzle_jobs{state=\"done\"}"), 1);

  auto lost = Connect("lost", 2);
  EXPECT_EQ(metric("npuzzle_workers_connected"), 1);
  EXPECT_EQ(metric("npuzzle_coordinator_worker_running_jobs{worker=\"lost\"}"), 2);
  EXPECT_EQ(metric("npuzzle_coordinator_worker_free_slots{worker=\"lost\"}"), 0);
  v1::WorkerMessage progress;
  progress.mutable_progress()->set_job_id(lost->Assignments()[0].job_id());
  progress.mutable_progress()->set_attempt(1);
  progress.mutable_progress()->mutable_progress()->set_nodes_per_second(1500);
  Receive(lost.get(), progress);
  EXPECT_EQ(metric("npuzzle_coordinator_worker_node_rate{worker=\"lost\"}"), 1500);
  Disconnect(lost.get());
  EXPECT_EQ(metric("npuzzle_job_requeues_total{reason=\"worker_lost\"}"), 2);
  EXPECT_EQ(metric("npuzzle_workers_connected"), 0);

  ASSERT_TRUE(manager_->Cancel(ids[3]).ok());  // still queued: cancelled at once
  auto w = Connect("w", 3);
  ASSERT_EQ(w->Assignments().size(), 3u);
  EXPECT_EQ(metric("npuzzle_job_attempts_total"), 5);  // 2 on the lost worker, 3 here
  v1::WorkerMessage first = Finished(w->Assignments()[0]);
  first.mutable_finished()->mutable_result()->mutable_stats()->set_expanded(100);
  Receive(w.get(), first);
  Receive(w.get(), Finished(w->Assignments()[1]));
  v1::WorkerMessage failed;
  failed.mutable_finished()->set_job_id(w->Assignments()[2].job_id());
  failed.mutable_finished()->set_attempt(w->Assignments()[2].attempt());
  failed.mutable_finished()->set_error("boom");
  Receive(w.get(), failed);

  EXPECT_EQ(metric("npuzzle_jobs_finished_total{state=\"done\"}"), 3);
  EXPECT_EQ(metric("npuzzle_jobs_finished_total{state=\"failed\"}"), 1);
  EXPECT_EQ(metric("npuzzle_jobs_finished_total{state=\"cancelled\"}"), 1);
  EXPECT_EQ(metric("npuzzle_jobs{state=\"done\"}"), 3);
  EXPECT_EQ(metric("npuzzle_jobs{state=\"running\"}"), 0);
  EXPECT_EQ(metric("npuzzle_job_latency_seconds_count"), 3);
  EXPECT_EQ(metric("npuzzle_nodes_expanded_total"), 100);
  EXPECT_EQ(metric("npuzzle_queue_depth"), 0);
  EXPECT_EQ(metric("npuzzle_coordinator_worker_free_slots{worker=\"w\"}"), 3);
}

// The metrics list operators read (docs/operations.md) names every family
// the coordinator exports.
TEST_P(JobManagerTest, EveryMetricIsDocumented) {
  std::ifstream in(std::string(NPUZZLE_SOURCE_DIR) + "/docs/operations.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(doc.empty());
  std::istringstream rendered(manager_->metrics().Render());
  int families = 0;
  for (std::string line; std::getline(rendered, line);) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    const std::string name = line.substr(7, line.find(' ', 7) - 7);
    ++families;
    EXPECT_THAT(doc, HasSubstr("`" + name)) << name << " is not in docs/operations.md";
  }
  EXPECT_GT(families, 10);
}

NPUZZLE_FOR_EACH_STORE(JobManagerTest);
INSTANTIATE_TEST_SUITE_P(, SqliteJobManagerTest, ::testing::Values("sqlite"), testing::StoreName);

}  // namespace
}  // namespace npuzzle
