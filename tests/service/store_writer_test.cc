// The group-committing writer on its own, over a store that records its
// commits and can hold one back: what is appended while a commit is under
// way shares the next one, in order, and every write hears its own
// outcome once its commit is over.
#include "service/store/store_writer.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

class RecordingStore : public JobStore {
 public:
  // The first commit waits for Release().
  void HoldFirstCommit() { hold_ = true; }
  void Release() { released_.Notify(); }
  void WaitForFirstCommit() { started_.WaitForNotification(); }
  void FailCommits() { fail_ = true; }

  std::vector<absl::Status> Commit(const std::vector<Change>& changes) override {
    if (committing_.fetch_add(1) != 0) overlapped_ = true;
    if (!started_.HasBeenNotified()) started_.Notify();
    if (hold_ && !released_.HasBeenNotified()) released_.WaitForNotification();
    absl::SleepFor(absl::Milliseconds(1));  // room for a second commit to overlap, were it let
    committing_.fetch_sub(1);
    absl::MutexLock lock(&mu_);
    std::vector<std::string> ids;
    for (const Change& c : changes) ids.push_back(c.job.id());
    batches_.push_back(ids);
    return std::vector<absl::Status>(changes.size(), fail_ ? absl::InternalError("disk") : absl::OkStatus());
  }
  bool overlapped() const { return overlapped_; }
  std::vector<std::vector<std::string>> batches() {
    absl::MutexLock lock(&mu_);
    return batches_;
  }

  absl::StatusOr<int64_t> LastSeq() override { return 0; }
  absl::StatusOr<v1::Job> FindByRequestId(const std::string&, const std::string&) override {
    return absl::UnimplementedError("");
  }
  absl::StatusOr<v1::Job> Get(const std::string&) override { return absl::UnimplementedError(""); }
  absl::StatusOr<int> PurgeFinished(absl::Time, absl::Duration, int) override { return absl::UnimplementedError(""); }
  absl::StatusOr<Usage> DiskUsage() override { return Usage{}; }
  const std::string& Secret() const override { return secret_; }
  absl::Status DeleteFinished(const std::string&) override { return absl::UnimplementedError(""); }
  absl::StatusOr<std::vector<Row>> Unfinished() override { return std::vector<Row>{}; }
  absl::StatusOr<Page> List(const std::string&, const std::vector<v1::JobState>&,
                            const std::map<std::string, std::string>&, int, int64_t) override {
    return Page{};
  }
  absl::StatusOr<std::map<v1::JobState, int64_t>> CountByState() override { return std::map<v1::JobState, int64_t>{}; }
  absl::Status CheckWritable(absl::Duration) override { return absl::OkStatus(); }

 private:
  const std::string secret_ = "secret";
  bool hold_ = false;
  std::atomic<bool> fail_{false};
  std::atomic<int> committing_{0};
  std::atomic<bool> overlapped_{false};
  absl::Notification started_, released_;
  absl::Mutex mu_;
  std::vector<std::vector<std::string>> batches_;
};

StoreWriter::Write WriteOf(const std::string& id, std::vector<std::string>* done, absl::Status* outcome = nullptr) {
  v1::Job job;
  job.set_id(id);
  return {{job, 0}, [id, done, outcome](const absl::Status& s) {
            done->push_back(id);
            if (outcome != nullptr) *outcome = s;
          }};
}

TEST(StoreWriter, WritesAppendedDuringACommitShareTheNextOneInOrder) {
  RecordingStore store;
  store.HoldFirstCommit();
  std::vector<std::string> done;  // completions run one batch at a time
  StoreWriter writer(&store, [](std::vector<StoreWriter::Done>& calls, const std::vector<absl::Status>& outcomes) {
    for (size_t i = 0; i < calls.size(); ++i) calls[i](outcomes[i]);
  });
  writer.Append({WriteOf("a", &done)});
  store.WaitForFirstCommit();
  writer.Append({WriteOf("b", &done), WriteOf("c", &done)});
  writer.Append({WriteOf("d", &done)});
  store.Release();
  writer.WaitIdle();
  EXPECT_EQ(store.batches(), (std::vector<std::vector<std::string>>{{"a"}, {"b", "c", "d"}}));
  EXPECT_EQ(done, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_FALSE(store.overlapped());
}

// What a completion does (wake watchers, write to their streams) takes
// time; a change made meanwhile reaches the disk without waiting for it,
// yet its own completion still runs after the earlier one's.
TEST(StoreWriter, ACommitDoesNotWaitForTheLastOnesCompletionsButItsCompletionsDo) {
  RecordingStore store;
  absl::Notification a_completing, a_may_finish;
  absl::Mutex mu;
  std::vector<std::string> done;
  StoreWriter writer(&store, [&](std::vector<StoreWriter::Done>& calls, const std::vector<absl::Status>& outcomes) {
    for (size_t i = 0; i < calls.size(); ++i) calls[i](outcomes[i]);
  });
  auto completion = [&](const std::string& id) -> StoreWriter::Done {
    return [&, id](const absl::Status&) {
      if (id == "a") {
        a_completing.Notify();
        a_may_finish.WaitForNotification();
      }
      absl::MutexLock lock(&mu);
      done.push_back(id);
    };
  };
  v1::Job a, b;
  a.set_id("a");
  b.set_id("b");
  writer.Append({{{a, 0}, completion("a")}});
  a_completing.WaitForNotification();
  writer.Append({{{b, 0}, completion("b")}});
  // b is committed while a's completion is still running...
  for (int i = 0; i < 5000 && store.batches().size() < 2; ++i) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(store.batches(), (std::vector<std::vector<std::string>>{{"a"}, {"b"}}));
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(done.empty());  // ...and b's completion waits for a's
  }
  a_may_finish.Notify();
  writer.WaitIdle();
  EXPECT_EQ(done, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(store.overlapped());
}

TEST(StoreWriter, AFailedCommitIsEveryWritesOutcome) {
  RecordingStore store;
  store.FailCommits();
  std::vector<std::string> done;
  absl::Status first, second;
  StoreWriter writer(&store, [](std::vector<StoreWriter::Done>& calls, const std::vector<absl::Status>& outcomes) {
    for (size_t i = 0; i < calls.size(); ++i) calls[i](outcomes[i]);
  });
  writer.Append({WriteOf("a", &done, &first), WriteOf("b", &done, &second)});
  writer.WaitIdle();
  EXPECT_EQ(first.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(second.code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace npuzzle
