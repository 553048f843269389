// Every limit binds while pattern tables are built: cancellation and the
// time limit stop a build within 200 ms and leave no file behind, the memory
// limit refuses a build before it allocates, a watcher sees what the build
// is doing, and a job waiting for another's build can still be cancelled.
// The on-disk cache keeps to its size budget by evicting the least recently
// used tables nobody has mapped.
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/goals.h"
#include "engine/pdb/pdb_store.h"
#include "engine/solver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/process_util.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;

// An 8-tile table of the 15-puzzle: minutes to build, so every test here
// stops it early.
constexpr char kBigGroups[] = "1,2,3,4,5,6,7,8/9,10,11,12,13,14,15";

SolveRequest BigTableRequest(const std::string& dir) {
  SolveRequest r;
  r.goal = *GoalPreset("standard", 4, 4);
  r.start = *Board::Create(4, 4, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0, 15});
  r.algorithm = "idastar";
  r.heuristic = "pdb";
  r.heuristic_options.pdb_groups = kBigGroups;
  r.heuristic_options.pdb_dir = dir;
  r.heuristic_options.pdb_build_threads = 1;
  return r;
}

// Files in `dir` other than build locks: a stopped build must leave none.
std::vector<std::string> TableFiles(const std::string& dir) {
  std::vector<std::string> files;
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().extension() != ".lock") files.push_back(f.path().filename().string());
  }
  return files;
}

// Solves on a thread; Stop() cancels and says how long the solve took to
// notice.
class BackgroundSolve {
 public:
  explicit BackgroundSolve(SolveRequest request) : request_(std::move(request)) {
    request_.options.cancel = &cancel_;
    thread_ = std::thread([this] {
      absl::StatusOr<SolveResult> r = Solve(request_);
      absl::MutexLock lock(&mu_);
      result_ = std::move(r);
      finished_ = absl::Now();
    });
  }
  ~BackgroundSolve() {
    cancel_.Cancel();
    thread_.join();
  }

  absl::Duration CancelAndWait() {
    const absl::Time cancelled = absl::Now();
    cancel_.Cancel();
    thread_.join();
    thread_ = std::thread([] {});
    absl::MutexLock lock(&mu_);
    return finished_ - cancelled;
  }
  absl::StatusOr<SolveResult> result() {
    absl::MutexLock lock(&mu_);
    return result_;
  }

 private:
  SolveRequest request_;
  CancelToken cancel_;
  std::thread thread_;
  absl::Mutex mu_;
  absl::StatusOr<SolveResult> result_ ABSL_GUARDED_BY(mu_) = absl::UnknownError("not finished");
  absl::Time finished_ ABSL_GUARDED_BY(mu_);
};

TEST(TableBuildLimits, CancelStopsABuildWithin200MsAndLeavesNoFile) {
  testing::TempDir dir;
  BackgroundSolve solve(BigTableRequest(dir.path()));
  absl::SleepFor(absl::Milliseconds(400));
  EXPECT_LT(solve.CancelAndWait(), testing::Scaled(absl::Milliseconds(200)));
  ASSERT_TRUE(solve.result().ok()) << solve.result().status();
  EXPECT_EQ(solve.result()->status, SearchStatus::kCancelled);
  EXPECT_THAT(TableFiles(dir.path()), ::testing::IsEmpty());
}

TEST(TableBuildLimits, TimeLimitCoversTheBuild) {
  testing::TempDir dir;
  SolveRequest request = BigTableRequest(dir.path());
  request.options.limits.max_time = absl::Milliseconds(500);
  const absl::Time start = absl::Now();
  absl::StatusOr<SolveResult> r = Solve(request);
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, SearchStatus::kTimeLimit);
  EXPECT_LT(took, testing::Scaled(absl::Milliseconds(700)));
  EXPECT_THAT(TableFiles(dir.path()), ::testing::IsEmpty());
}

TEST(TableBuildLimits, MemoryLimitRefusesTheBuildBeforeAllocating) {
  testing::TempDir dir;
  SolveRequest request = BigTableRequest(dir.path());
  request.options.limits.max_memory_bytes = uint64_t{500} << 20;  // it needs about 1.5 GB
  std::string messages;
  request.heuristic_options.on_message = [&](absl::string_view m) { messages += std::string(m) + "\n"; };
  const absl::Time start = absl::Now();
  absl::StatusOr<SolveResult> r = Solve(request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, SearchStatus::kMemoryLimit);
  EXPECT_LT(absl::Now() - start, testing::Scaled(absl::Milliseconds(100)));
  EXPECT_THAT(messages, HasSubstr("more than the memory limit of 500 MiB"));
  EXPECT_THAT(TableFiles(dir.path()), ::testing::IsEmpty());
}

TEST(TableBuildLimits, WatchersSeeWhichTableAndHowFar) {
  testing::TempDir dir;
  SolveRequest request = BigTableRequest(dir.path());
  request.options.progress_interval = absl::Milliseconds(20);
  absl::Mutex mu;
  std::vector<std::string> activities;
  request.options.on_progress = [&](const Progress& p) {
    absl::MutexLock lock(&mu);
    activities.push_back(p.activity);
  };
  BackgroundSolve solve(std::move(request));
  absl::SleepFor(absl::Milliseconds(500));
  solve.CancelAndWait();
  absl::MutexLock lock(&mu);
  ASSERT_GE(activities.size(), 3u);
  EXPECT_THAT(activities.back(), HasSubstr("building pattern table for tiles 1,2,3,4,5,6,7,8 (4x4): layer"));
}

TEST(TableBuildLimits, AJobWaitingForAnothersBuildCanBeCancelled) {
  testing::TempDir dir;
  BackgroundSolve builder(BigTableRequest(dir.path()));
  absl::SleepFor(absl::Milliseconds(200));
  BackgroundSolve waiter(BigTableRequest(dir.path()));
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_LT(waiter.CancelAndWait(), testing::Scaled(absl::Milliseconds(200)));
  EXPECT_EQ(waiter.result()->status, SearchStatus::kCancelled);
  EXPECT_LT(builder.CancelAndWait(), testing::Scaled(absl::Milliseconds(200)));
  EXPECT_THAT(TableFiles(dir.path()), ::testing::IsEmpty());
}

// --- the cache budget ---

class PdbCacheBudgetTest : public ::testing::Test {
 protected:
  // Each 3x3 four-tile table is 3,024 entries behind a 4 KiB header.
  static constexpr uint64_t kTableFile = 4096 + 9 * 8 * 7 * 6;

  PatternKey Key(std::vector<int> group) const { return {*GoalPreset("standard", 3, 3), std::move(group)}; }
  std::string Path(const PatternKey& key) const { return dir_.path() + "/" + key.FileName(); }
  PdbBuildOptions Options(uint64_t budget) {
    PdbBuildOptions o;
    o.cache_budget_bytes = budget;
    o.on_message = [this](absl::string_view m) { messages_ += std::string(m) + "\n"; };
    return o;
  }
  void MakeOlder(const PatternKey& key, int seconds) {
    struct stat st;
    ASSERT_EQ(stat(Path(key).c_str(), &st), 0);
    const struct timespec times[2] = {st.st_atim, {st.st_mtim.tv_sec - seconds, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, Path(key).c_str(), times, 0), 0);
  }

  testing::TempDir dir_;
  std::string messages_;
};

TEST_F(PdbCacheBudgetTest, EvictsTheLeastRecentlyUsedTableNobodyHolds) {
  const PatternKey a = Key({1, 2, 3, 4}), b = Key({5, 6, 7, 8}), c = Key({1, 2, 3, 5});
  {
    PdbStore store(dir_.path());
    ASSERT_TRUE(store.Table(a, Options(2 * kTableFile)).ok());
    ASSERT_TRUE(store.Table(b, Options(2 * kTableFile)).ok());
  }
  MakeOlder(a, 100);  // a was used longest ago
  PdbStore store(dir_.path());
  ASSERT_TRUE(store.Table(c, Options(2 * kTableFile)).ok());
  EXPECT_FALSE(std::filesystem::exists(Path(a)));
  EXPECT_TRUE(std::filesystem::exists(Path(b)));
  EXPECT_TRUE(std::filesystem::exists(Path(c)));
  EXPECT_THAT(messages_, HasSubstr("evicted pattern table"));
}

TEST_F(PdbCacheBudgetTest, TablesInUseAreNeverEvicted) {
  const PatternKey a = Key({1, 2, 3, 4}), b = Key({5, 6, 7, 8}), c = Key({1, 2, 3, 5});
  PdbStore holder(dir_.path());  // keeps both mapped, as a running job would
  ASSERT_TRUE(holder.Table(a, Options(2 * kTableFile)).ok());
  ASSERT_TRUE(holder.Table(b, Options(2 * kTableFile)).ok());
  PdbStore other(dir_.path());
  absl::StatusOr<std::shared_ptr<const PatternTable>> table = other.Table(c, Options(2 * kTableFile));
  ASSERT_TRUE(table.ok()) << table.status();  // usable, but kept in memory only
  EXPECT_TRUE(std::filesystem::exists(Path(a)));
  EXPECT_TRUE(std::filesystem::exists(Path(b)));
  EXPECT_FALSE(std::filesystem::exists(Path(c)));
  EXPECT_THAT(messages_, HasSubstr("the tables in it are in use; keeping the table in memory only"));
}

TEST_F(PdbCacheBudgetTest, ATableLargerThanTheBudgetIsRefused) {
  PdbStore store(dir_.path());
  absl::StatusOr<std::shared_ptr<const PatternTable>> table = store.Table(Key({1, 2, 3, 4}), Options(4096));
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(table.status().message(), HasSubstr("more than the table cache budget of 1 MiB"));
}

}  // namespace
}  // namespace npuzzle
