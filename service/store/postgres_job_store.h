// PostgresJobStore: the job store in a PostgreSQL database, for operators
// who keep their state in a replicated database rather than on the
// coordinator's disk. The tables match SQLite's (kSchema in the .cc): one
// row per job with the columns every query needs, and a label table. A
// batch is one transaction in one round trip; the server's
// synchronous_commit decides when it is durable (on, PostgreSQL's default:
// flushed before the commit is answered).
//
// One coordinator at a time: the store holds a session-level advisory lock
// for as long as it is open, and a second coordinator's Open is refused,
// since the job manager keeps the queue and the leases in its own memory.
// A reconnected writer takes the lock again before its next commit (and
// CheckWritable), and fails with FailedPrecondition if another coordinator
// took it meanwhile: a standby, which now owns the jobs.
//
// A connection that breaks (the database restarted) is reopened on the
// next call; the call that found it broken fails Unavailable.
#ifndef NPUZZLE_SERVICE_STORE_POSTGRES_JOB_STORE_H_
#define NPUZZLE_SERVICE_STORE_POSTGRES_JOB_STORE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "service/store/job_store.h"
#include "service/store/postgres_connection.h"

namespace npuzzle {

class PostgresJobStore final : public JobStore {
 public:
  // `uri`: a libpq connection string or URI (postgres://...). Creates the
  // tables in an empty database; refuses one from a newer version, and a
  // database another coordinator still has open after `lock_wait` (the
  // server ends a departed coordinator's session a moment after it goes).
  // With `standby` set it waits as long as it takes instead: it takes
  // over once the other coordinator is gone, waiting out a database that
  // is down meanwhile.
  static absl::StatusOr<std::unique_ptr<PostgresJobStore>> Open(const std::string& uri,
                                                                absl::Duration lock_wait = absl::Seconds(10),
                                                                const StandbyWait* standby = nullptr);

  std::vector<absl::Status> Commit(const std::vector<Change>& changes) override;
  absl::StatusOr<int64_t> LastSeq() override;
  absl::StatusOr<v1::Job> FindByRequestId(const std::string& tenant, const std::string& request_id) override;
  absl::StatusOr<v1::Job> Get(const std::string& id) override;
  absl::StatusOr<std::vector<Row>> Unfinished() override;
  absl::StatusOr<Page> List(const std::string& tenant, const std::vector<v1::JobState>& states,
                            const std::map<std::string, std::string>& labels, int page_size, int64_t before) override;
  absl::StatusOr<std::map<v1::JobState, int64_t>> CountByState() override;
  absl::Status Advertise(const std::string& addresses) override;
  absl::Status CheckWritable(absl::Duration wait) override;
  absl::StatusOr<int> PurgeFinished(absl::Time now, absl::Duration retain, int limit) override;
  // The tables' size with their indexes; PostgreSQL's autovacuum, not the
  // store, reuses the space deleted rows leave, so free_bytes is 0.
  absl::StatusOr<Usage> DiskUsage() override;
  const std::string& Secret() const override { return secret_; }
  absl::Status DeleteFinished(const std::string& id) override;

 private:
  PostgresJobStore(std::unique_ptr<PgConnection> writer, std::unique_ptr<PgConnection> reader,
                   std::unique_ptr<PgConnection> stats, std::string secret)
      : writer_(std::move(writer)), reader_(std::move(reader)), stats_(std::move(stats)), secret_(std::move(secret)) {}
  // The coordinator's lock, taken on the writer's current connection.
  static absl::Status Lock(PgConnection& writer);
  // Takes it again if the writer reconnected since it was last taken.
  absl::Status StillLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // The statement that stores one change.
  static PgQuery Statement(const Change& change);
  // The job of the first row `query` returns, with its seq; NotFound(`missing`).
  absl::StatusOr<Row> FindRow(const PgQuery& query, absl::string_view missing) ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);

  absl::Mutex write_mu_;
  const std::unique_ptr<PgConnection> writer_ ABSL_PT_GUARDED_BY(write_mu_);
  int64_t locked_on_connect_ ABSL_GUARDED_BY(write_mu_) = 1;  // writer_->connects() when the lock was taken
  absl::Mutex read_mu_;
  const std::unique_ptr<PgConnection> reader_ ABSL_PT_GUARDED_BY(read_mu_);
  absl::Mutex stats_mu_;
  const std::unique_ptr<PgConnection> stats_ ABSL_PT_GUARDED_BY(stats_mu_);
  const std::string secret_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_POSTGRES_JOB_STORE_H_
