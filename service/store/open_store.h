// Opens the job store a coordinator is configured with: SQLite in its data
// directory unless --store names a PostgreSQL database.
#ifndef NPUZZLE_SERVICE_STORE_OPEN_STORE_H_
#define NPUZZLE_SERVICE_STORE_OPEN_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "service/store/job_store.h"

namespace npuzzle {

// `store`: empty for SQLite at `sqlite_path` (synced per `full_sync`), or a
// PostgreSQL connection URI (postgres:// or postgresql://), whose database
// another coordinator may have. With `standby` set, this is a standby: it
// waits for the other to go, as StandbyWait says; without, it is refused.
absl::StatusOr<std::unique_ptr<JobStore>> OpenJobStore(const std::string& store, const std::string& sqlite_path,
                                                       bool full_sync, const StandbyWait* standby = nullptr);

// The store as a log may show it: a URI's password replaced by "***".
std::string ShownStore(const std::string& store);

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_OPEN_STORE_H_
