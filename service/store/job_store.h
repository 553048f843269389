// JobStore: the coordinator's durable record of every job, whatever holds
// it. Each job is one row: the whole Job message, found by id, by its
// tenant's request id, and in submission order (its seq). Writes come in
// batches, each applied whole or not at all and durable when Commit
// returns (StoreWriter groups them); reads never wait behind a commit.
// SqliteJobStore (sqlite_job_store.h) keeps it in a file in the data
// directory, PostgresJobStore (postgres_job_store.h) in a database.
#ifndef NPUZZLE_SERVICE_STORE_JOB_STORE_H_
#define NPUZZLE_SERVICE_STORE_JOB_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

// What Get says of an id it does not know; also said of another tenant's
// job, which must look the same.
absl::Status NoSuchJob(const std::string& id);

// A job id as an error message may show it: ids come from clients and are
// checked for form before they reach the store, but a message is no place
// for a long one all the same.
std::string ShownId(const std::string& id);

// The columns a store keeps beside each job for its queries, derived from
// the job the same way in every store.
struct DerivedColumns {
  int64_t finished = 0;  // unix seconds it finished; 0 (NULL) while unfinished
  int64_t expires = 0;   // unix seconds its own retention ends; 0 (NULL): none
};
DerivedColumns DeriveColumns(const v1::Job& job);

// The request_id column: request ids are scoped per tenant. The unnamed
// tenant (no --auth-tokens) keeps the bare id, as stores written before
// tenants existed have; named tenants hold no newline, so keys of two
// tenants never meet.
std::string RequestKey(const std::string& tenant, const std::string& request_id);

class JobStore {
 public:
  virtual ~JobStore() = default;

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
  virtual std::vector<absl::Status> Commit(const std::vector<Change>& changes) = 0;

  // The largest seq stored (0 in an empty store).
  virtual absl::StatusOr<int64_t> LastSeq() = 0;

  // The job a tenant's request id created; NotFound if none did.
  virtual absl::StatusOr<v1::Job> FindByRequestId(const std::string& tenant, const std::string& request_id) = 0;

  // NoSuchJob for unknown ids.
  virtual absl::StatusOr<v1::Job> Get(const std::string& id) = 0;

  struct Row {
    v1::Job job;
    int64_t seq;
  };
  // Queued and running jobs, in submission order.
  virtual absl::StatusOr<std::vector<Row>> Unfinished() = 0;

  // A page of ListJobs stays well under gRPC's default 4 MiB message limit.
  static constexpr size_t kMaxPageBytes = size_t{1} << 20;

  struct Page {
    std::vector<v1::Job> jobs;
    int64_t next_before = 0;  // 0: no more
  };
  // A listing with labels or states looks at no more than this many jobs
  // per call (of those carrying its first label, or in its states), so
  // that no filter, however rare its matches, holds the reader for long; a
  // page may then be short, or empty, with a next_before to go on from.
  static constexpr int kMaxListScan = 5000;
  // The tenant's jobs, newest first, with seq < `before` (0: from the
  // newest), in any of `states` (empty: all) and carrying all of `labels`;
  // at most `page_size` jobs and (beyond the first) kMaxPageBytes of them.
  virtual absl::StatusOr<Page> List(const std::string& tenant, const std::vector<v1::JobState>& states,
                                    const std::map<std::string, std::string>& labels, int page_size,
                                    int64_t before) = 0;

  virtual absl::StatusOr<std::map<v1::JobState, int64_t>> CountByState() = 0;

  // Whether a write can commit now, waiting at most `wait` for it:
  // FailedPrecondition if none ever will from this process again (another
  // coordinator took the store over), else a passing trouble.
  virtual absl::Status CheckWritable(absl::Duration wait) = 0;

  // Deletes at most `limit` finished jobs (done, failed, cancelled) whose
  // retention has ended by `now`: those that finished more than `retain`
  // ago (zero: none on that account), and those past their own
  // spec.retain_seconds. Returns how many it deleted, and gives the space
  // they held back to the file system.
  virtual absl::StatusOr<int> PurgeFinished(absl::Time now, absl::Duration retain, int limit) = 0;

  // The space the store takes: in all, and what of it is free for reuse.
  struct Usage {
    int64_t bytes = 0;
    int64_t free_bytes = 0;
  };
  virtual absl::StatusOr<Usage> DiskUsage() = 0;

  // A random secret of this store, the same for every process that opens
  // it: the key to what the service hands out that clients must neither
  // read nor forge (page tokens).
  virtual const std::string& Secret() const = 0;

  // Deletes the job if it has finished: NotFound if there is none, and
  // FailedPrecondition if it is queued or running.
  virtual absl::Status DeleteFinished(const std::string& id) = 0;

  // Records where clients and workers reach the coordinator that has the
  // store (`addresses`: StandbyWait::on_active's form), for standbys that
  // forward to it. A store only one coordinator ever opens keeps nothing.
  virtual absl::Status Advertise(const std::string& /*addresses*/) { return absl::OkStatus(); }
};

// How a standby coordinator waits for a store another coordinator has.
struct StandbyWait {
  // Notified: stop waiting (Cancelled).
  const absl::Notification* stop = nullptr;
  // Told what the active coordinator advertises each time that changes:
  // "client=HOST:PORT worker=HOST:PORT http=HOST:PORT" (the ports it has),
  // or "" while the database cannot be reached or nothing is advertised.
  std::function<void(const std::string&)> on_active;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_JOB_STORE_H_
