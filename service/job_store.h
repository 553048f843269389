// JobStore: the coordinator's durable record of every job, in SQLite (WAL
// mode). Each job is one row holding the whole Job message, plus the
// columns that queries need (sequence, request id, state). Writes come in
// batches, one transaction and one sync each (see StoreWriter); reads use
// a second connection, so they never wait behind a commit's sync.
#ifndef NPUZZLE_SERVICE_JOB_STORE_H_
#define NPUZZLE_SERVICE_JOB_STORE_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "npuzzle/v1/solver.pb.h"

struct sqlite3;
struct sqlite3_stmt;

namespace npuzzle {

class JobStore {
 public:
  // Beside the store, in its directory: the id of the store the directory
  // holds.
  static constexpr const char* kIdentityFile = "STORE_ID";

  // `full_sync`: every commit reaches the disk before it returns (survives
  // power loss); otherwise commits survive process crashes only. Refuses
  // (FailedPrecondition, saying what to do) a damaged file, and a file that
  // is not the store its directory held: emptied, deleted or replaced.
  static absl::StatusOr<std::unique_ptr<JobStore>> Open(const std::string& path, bool full_sync = true);

  // Copies the store at `path` to `to` (via a temporary file and a rename)
  // from one consistent snapshot; safe while a server uses it.
  static absl::Status Backup(const std::string& path, const std::string& to);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // One job's new row. A change with a seq stores a new job at that place
  // in submission order; one without replaces the stored job of its id.
  struct Change {
    v1::Job job;
    int64_t seq = 0;
  };
  // Applies `changes` in order in one transaction and returns each one's
  // outcome: AlreadyExists for a new job whose id or request id is taken,
  // NotFound for a replacement of an unknown job. Any other failure fails
  // the whole batch, and every outcome is that error.
  std::vector<absl::Status> Commit(const std::vector<Change>& changes);

  // The largest seq stored (0 in an empty store).
  absl::StatusOr<int64_t> LastSeq();

  // What Get says of an id it does not know; also said of another
  // tenant's job, which must look the same.
  static absl::Status NoSuchJob(const std::string& id);

  // The job a tenant's request id created; NotFound if none did.
  absl::StatusOr<v1::Job> FindByRequestId(const std::string& tenant, const std::string& request_id);

  // NotFound for unknown ids.
  absl::StatusOr<v1::Job> Get(const std::string& id);

  struct Row {
    v1::Job job;
    int64_t seq;
  };
  // Queued and running jobs, in submission order.
  absl::StatusOr<std::vector<Row>> Unfinished();

  // A page of ListJobs stays well under gRPC's default 4 MiB message limit.
  static constexpr size_t kMaxPageBytes = size_t{1} << 20;

  struct Page {
    std::vector<v1::Job> jobs;
    int64_t next_before = 0;  // 0: no more
  };
  // The tenant's jobs, newest first, with seq < `before` (0: from the
  // newest), in any of `states` (empty: all) and carrying all of `labels`;
  // at most `page_size` jobs and (beyond the first) kMaxPageBytes of them.
  absl::StatusOr<Page> List(const std::string& tenant, const std::vector<v1::JobState>& states,
                            const std::map<std::string, std::string>& labels, int page_size, int64_t before);

  absl::StatusOr<std::map<v1::JobState, int64_t>> CountByState();

  // Whether a write can commit now: an empty write transaction, waiting at
  // most `wait` for another connection's lock.
  absl::Status CheckWritable(absl::Duration wait);

 private:
  JobStore(sqlite3* writer, sqlite3* reader) : writer_(writer), reader_(reader) {}
  absl::Status CheckIntegrity() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status CheckIdentity(const std::filesystem::path& identity_file) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
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
  sqlite3_stmt* update_ ABSL_GUARDED_BY(write_mu_) = nullptr;
  absl::Mutex read_mu_;
  sqlite3* const reader_ ABSL_PT_GUARDED_BY(read_mu_);
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOB_STORE_H_
