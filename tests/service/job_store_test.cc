// The job store against damaged, emptied, deleted and replaced files: it
// either refuses to open, saying what to do, or serves every job; it never
// serves fewer jobs than it holds without an error. And its online backup
// restores every job.
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/store/sqlite_job_store.h"
#include "tests/util/process_util.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;

constexpr int kJobs = 68;

v1::Job MakeJob(int i) {
  v1::Job job;
  job.set_id(absl::StrCat("job-", i));
  job.set_state(i % 3 == 0 ? v1::JOB_STATE_QUEUED : v1::JOB_STATE_DONE);
  job.mutable_spec()->set_request_id(absl::StrCat("request-", i));
  // Rows big enough that the jobs span many pages.
  (*job.mutable_spec()->mutable_labels())["note"] = std::string(900, 'a' + i % 26);
  return job;
}

// Stores job `i` as the i-th submission.
absl::Status Insert(JobStore& store, const v1::Job& job, int i) { return store.Commit({{job, i + 1}})[0]; }

std::string FillStore(const testing::TempDir& dir) {
  const std::string path = dir.path() + "/jobs.db";
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status();
  for (int i = 0; i < kJobs; ++i) EXPECT_TRUE(Insert(**store, MakeJob(i), i).ok());
  return path;
}

// Every job the store serves, through every read it offers, or the first
// error; a read that ends early without an error is a failure.
absl::Status ReadEverything(JobStore& store, std::set<std::string>* ids) {
  int64_t before = 0;
  do {
    absl::StatusOr<JobStore::Page> page = store.List("", {}, {}, 10, before);
    if (!page.ok()) return page.status();
    for (const v1::Job& job : page->jobs) ids->insert(job.id());
    before = page->next_before;
  } while (before != 0);
  absl::StatusOr<std::vector<JobStore::Row>> unfinished = store.Unfinished();
  if (!unfinished.ok()) return unfinished.status();
  for (int i = 0; i < kJobs; ++i) {
    absl::StatusOr<v1::Job> job = store.Get(absl::StrCat("job-", i));
    if (!job.ok()) return job.status();
  }
  return absl::OkStatus();
}

void ExpectRefusedOrWhole(const std::string& path, const std::string& what) {
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
  if (!store.ok()) {
    EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << what;
    EXPECT_THAT(store.status().message(), HasSubstr("Restore it from a backup")) << what;
    return;
  }
  std::set<std::string> ids;
  const absl::Status read = ReadEverything(**store, &ids);
  if (read.ok()) {
    EXPECT_EQ(ids.size(), static_cast<size_t>(kJobs)) << what << ": jobs went missing silently";
  }
}

void Overwrite(const std::string& path, int64_t offset, int64_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string noise(bytes, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(offset);
  f.write(noise.data(), noise.size());
}

TEST(JobStore, DamageAnywhereIsRefusedOrEveryJobIsServed) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    testing::TempDir dir;
    const std::string path = FillStore(dir);
    const int64_t size = static_cast<int64_t>(std::filesystem::file_size(path));
    const int64_t offset = static_cast<int64_t>(seed * size / 8) / 4096 * 4096 + static_cast<int64_t>(seed * 97);
    Overwrite(path, offset, 4096, seed);
    ExpectRefusedOrWhole(path, absl::StrCat("4 KiB of noise at ", offset));
  }
}

// The store checkpoints its log every 100 pages: this many of MakeJob's
// commits fit in one log.
constexpr int kLoggedJobs = 8;

// The files a crash leaves: the store and its write-ahead log as they are
// while it runs (a copy, taken with kLoggedJobs jobs committed and none
// yet checkpointed into the store file), in `to`.
std::string CrashImage(const testing::TempDir& from, const testing::TempDir& to) {
  const std::string path = from.path() + "/jobs.db";
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status();
  for (int i = 0; i < kLoggedJobs; ++i) EXPECT_TRUE(Insert(**store, MakeJob(i), i).ok());
  for (const char* file : {"/jobs.db", "/jobs.db-wal"}) {
    std::filesystem::copy_file(from.path() + file, to.path() + file);
  }
  return to.path() + "/jobs.db";
}

// SQLite stops reading a log at its first bad frame and drops every commit
// after it without a word; the store refuses such a log instead, and
// still opens one whose only bad frames are its last transaction's (as a
// crash mid-commit leaves them).
TEST(JobStore, ADamagedWriteAheadLogIsRefused) {
  {
    testing::TempDir from, to;
    const std::string path = CrashImage(from, to);
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    absl::StatusOr<JobStore::Page> page = (*store)->List("", {}, {}, 1000, 0);
    ASSERT_TRUE(page.ok());
    EXPECT_EQ(page->jobs.size(), static_cast<size_t>(kLoggedJobs));
  }
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    testing::TempDir from, to;
    const std::string path = CrashImage(from, to);
    const int64_t wal_size = static_cast<int64_t>(std::filesystem::file_size(path + "-wal"));
    ASSERT_GT(wal_size, 30 * 4096) << "the log was checkpointed: the test needs it full";
    Overwrite(path + "-wal", static_cast<int64_t>(seed) * wal_size / 6, 64, seed);
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
    ASSERT_FALSE(store.ok()) << "64 bytes of noise at a sixth times " << seed << " of the log";
    EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(store.status().message(), HasSubstr("jobs.db-wal is damaged at frame"));
    EXPECT_THAT(store.status().message(), HasSubstr("Restore it from a backup"));
  }
  {
    testing::TempDir from, to;
    const std::string path = CrashImage(from, to);
    const auto wal_size = std::filesystem::file_size(path + "-wal");
    std::filesystem::resize_file(path + "-wal", wal_size - 2000);  // the last frame torn
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    absl::StatusOr<JobStore::Page> page = (*store)->List("", {}, {}, 1000, 0);
    ASSERT_TRUE(page.ok());
    EXPECT_EQ(page->jobs.size(), static_cast<size_t>(kLoggedJobs - 1));
  }
}

// What a damaged log can cost is bounded: however many commits there
// were, the log holds only the last 100 pages' worth of them un-copied.
TEST(JobStore, TheLogIsCheckpointedEvery100Pages) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/jobs.db";
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
  ASSERT_TRUE(store.ok());
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(Insert(**store, MakeJob(i), i).ok());
  // A checkpoint starts the log over from its first frame, so the log
  // file never grows much past 100 frames.
  EXPECT_LT(std::filesystem::file_size(path + "-wal"), 130u * (4096 + 24));
  EXPECT_GT(std::filesystem::file_size(path), 300u * 900);
}

TEST(JobStore, AnOverwrittenPageIsRefused) {
  testing::TempDir dir;
  const std::string path = FillStore(dir);
  Overwrite(path, 4096, 4096, 7);  // page 2: the first b-tree page after the header
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("damaged"));
}

TEST(JobStore, AFileThatIsNotADatabaseIsRefused) {
  testing::TempDir dir;
  const std::string path = FillStore(dir);
  std::ofstream(path, std::ios::trunc) << std::string(10000, 'x');
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("cannot be used"));
}

TEST(JobStore, AnEmptiedDeletedOrReplacedStoreIsNoticed) {
  {
    testing::TempDir dir;
    const std::string path = FillStore(dir);
    std::filesystem::resize_file(path, 0);
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
    ASSERT_FALSE(store.ok());
    EXPECT_THAT(store.status().message(), HasSubstr("a new, empty one"));
  }
  {
    testing::TempDir dir;
    const std::string path = FillStore(dir);
    std::filesystem::remove(path);
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
    ASSERT_FALSE(store.ok());
    EXPECT_THAT(store.status().message(), HasSubstr("a new, empty one"));
  }
  {
    testing::TempDir dir, other;
    const std::string path = FillStore(dir);
    const std::string stranger = FillStore(other);
    std::filesystem::copy_file(stranger, path, std::filesystem::copy_options::overwrite_existing);
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
    ASSERT_FALSE(store.ok());
    EXPECT_THAT(store.status().message(), HasSubstr("another store"));
  }
}

TEST(JobStore, ABackupTakenWhileOpenRestoresEveryJob) {
  testing::TempDir dir, elsewhere;
  const std::string path = dir.path() + "/jobs.db";
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  for (int i = 0; i < kJobs; ++i) ASSERT_TRUE(Insert(**store, MakeJob(i), i).ok());
  const std::string backup = elsewhere.path() + "/backup.db";
  ASSERT_TRUE(SqliteJobStore::Backup(path, backup).ok());
  store->reset();

  // The directory is lost but for its identity file; the backup goes back.
  std::filesystem::remove(path);
  std::filesystem::copy_file(backup, path);
  absl::StatusOr<std::unique_ptr<JobStore>> restored = SqliteJobStore::Open(path);
  ASSERT_TRUE(restored.ok()) << restored.status();
  std::set<std::string> ids;
  ASSERT_TRUE(ReadEverything(**restored, &ids).ok());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kJobs));
}

TEST(JobStore, PagesAreBoundedInBytes) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(dir.path() + "/jobs.db");
  ASSERT_TRUE(store.ok());
  for (int i = 0; i < 30; ++i) {
    v1::Job job = MakeJob(i);
    (*job.mutable_spec()->mutable_labels())["note"] = std::string(100000, 'x');
    ASSERT_TRUE(Insert(**store, job, i).ok());
  }
  absl::StatusOr<JobStore::Page> page = (*store)->List("", {}, {}, 1000, 0);
  ASSERT_TRUE(page.ok());
  size_t bytes = 0;
  for (const v1::Job& job : page->jobs) bytes += job.ByteSizeLong();
  EXPECT_LE(bytes, JobStore::kMaxPageBytes);
  EXPECT_LT(page->jobs.size(), 30u);
  EXPECT_NE(page->next_before, 0);
}

}  // namespace
}  // namespace npuzzle
