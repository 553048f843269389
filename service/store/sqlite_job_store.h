// SqliteJobStore: the job store in one SQLite file (WAL mode) in the data
// directory, in the tables sqlite_schema.h describes. A batch is one
// transaction and one sync; reads use a second connection, so they never
// wait behind a commit's sync, and metrics a third.
#ifndef NPUZZLE_SERVICE_STORE_SQLITE_JOB_STORE_H_
#define NPUZZLE_SERVICE_STORE_SQLITE_JOB_STORE_H_

#include <filesystem>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "service/store/job_store.h"

struct sqlite3;
struct sqlite3_stmt;

namespace npuzzle {

class SqliteJobStore final : public JobStore {
 public:
  // Beside the store, in its directory: the id of the store the directory
  // holds.
  static constexpr const char* kIdentityFile = "STORE_ID";

  // `full_sync`: every commit reaches the disk before it returns (survives
  // power loss); otherwise commits survive process crashes only. Refuses
  // (FailedPrecondition, saying what to do) a damaged file, and a file that
  // is not the store its directory held: emptied, deleted or replaced.
  static absl::StatusOr<std::unique_ptr<SqliteJobStore>> Open(const std::string& path, bool full_sync = true);

  // Copies the store at `path` to `to` (via a temporary file and a rename)
  // from one consistent snapshot; safe while a server uses it.
  static absl::Status Backup(const std::string& path, const std::string& to);

  ~SqliteJobStore() override;
  SqliteJobStore(const SqliteJobStore&) = delete;
  SqliteJobStore& operator=(const SqliteJobStore&) = delete;

  std::vector<absl::Status> Commit(const std::vector<Change>& changes) override;
  absl::StatusOr<int64_t> LastSeq() override;
  absl::StatusOr<v1::Job> FindByRequestId(const std::string& tenant, const std::string& request_id) override;
  absl::StatusOr<v1::Job> Get(const std::string& id) override;
  absl::StatusOr<std::vector<Row>> Unfinished() override;
  absl::StatusOr<Page> List(const std::string& tenant, const std::vector<v1::JobState>& states,
                            const std::map<std::string, std::string>& labels, int page_size, int64_t before) override;
  absl::StatusOr<std::map<v1::JobState, int64_t>> CountByState() override;
  // An empty write transaction, waiting at most `wait` for another
  // connection's lock; and at least kMinFreeBytes free on the disk.
  absl::Status CheckWritable(absl::Duration wait) override;
  static constexpr uint64_t kMinFreeBytes = uint64_t{1} << 20;
  absl::StatusOr<int> PurgeFinished(absl::Time now, absl::Duration retain, int limit) override;
  absl::StatusOr<Usage> DiskUsage() override;
  const std::string& Secret() const override { return secret_; }
  absl::Status DeleteFinished(const std::string& id) override;

 private:
  SqliteJobStore(sqlite3* writer, sqlite3* reader, sqlite3* stats) : writer_(writer), reader_(reader), stats_(stats) {}
  absl::Status CheckIntegrity() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status CheckIdentity(const std::filesystem::path& identity_file) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // The `meta` table's value of `key` ("" when it has none), and a new one.
  absl::StatusOr<std::string> ReadMeta(const char* key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status WriteMeta(const char* key, const std::string& value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  static std::string RandomHex(int words);
  absl::Status LoadSecret() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // List's two ways: by tenant and state, or from the first label's rows.
  absl::StatusOr<Page> ListByState(const std::string& tenant, const std::vector<v1::JobState>& states, int page_size,
                                   int64_t before) ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  absl::StatusOr<Page> ListByLabel(const std::string& tenant, const std::vector<v1::JobState>& states,
                                   const std::map<std::string, std::string>& labels, int page_size, int64_t before)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  // The job whose `column` (a fixed column name) equals `value`, with its
  // seq; NotFound(`missing`) when there is none.
  absl::StatusOr<Row> FindRow(const char* column, const std::string& value, absl::string_view missing)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  // The statements every commit runs, prepared once.
  absl::Status PrepareWrites() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Runs one of them that returns no rows.
  absl::Status Step(sqlite3_stmt* stmt, absl::string_view what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // One change inside Commit's transaction.
  absl::Status Apply(const Change& change) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  absl::Mutex write_mu_;
  sqlite3* const writer_ ABSL_PT_GUARDED_BY(write_mu_);
  sqlite3_stmt* begin_ ABSL_GUARDED_BY(write_mu_) = nullptr;
  sqlite3_stmt* commit_ ABSL_GUARDED_BY(write_mu_) = nullptr;
  sqlite3_stmt* insert_ ABSL_GUARDED_BY(write_mu_) = nullptr;
  sqlite3_stmt* insert_label_ ABSL_GUARDED_BY(write_mu_) = nullptr;
  sqlite3_stmt* update_ ABSL_GUARDED_BY(write_mu_) = nullptr;
  std::string secret_;  // set once, in Open
  std::string dir_;     // the store's directory, set once, in Open
  absl::Mutex read_mu_;
  sqlite3* const reader_ ABSL_PT_GUARDED_BY(read_mu_);
  absl::Mutex stats_mu_;
  sqlite3* const stats_ ABSL_PT_GUARDED_BY(stats_mu_);
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_SQLITE_JOB_STORE_H_
