// The job store's tables in SQLite, and how a store written by an earlier
// version is brought up to date when it is opened.
//
// Each job is one row holding the whole Job message, plus the columns that
// queries find it by. Every query the service makes is an index range, so
// none grows with the store:
//   jobs_by_state         the queue at start, counts, listings by state
//   jobs_by_tenant        a tenant's listing, newest first
//   jobs_by_finished      retention by the server's --retain-finished
//   jobs_by_expiry        retention by a job's own retain_seconds
//   job_labels            a tenant's jobs carrying a label, newest first
// Labels never change after submission, so a job's label rows are written
// with it and removed with it (a trigger).
#ifndef NPUZZLE_SERVICE_STORE_SQLITE_SCHEMA_H_
#define NPUZZLE_SERVICE_STORE_SQLITE_SCHEMA_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

// Creates the tables in a new file, or upgrades those of an earlier
// version, in one transaction; a store from a newer version is refused.
// Must run before any other statement of the writer's.
absl::Status CreateOrUpgradeSchema(sqlite3* db);

// Writes the label rows of a job stored at `seq`.
absl::Status InsertLabels(sqlite3* db, sqlite3_stmt* insert_label, const v1::Job& job, int64_t seq);
inline constexpr const char* kInsertLabelSql = "INSERT INTO job_labels (tenant, key, value, seq) VALUES (?, ?, ?, ?)";

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_SQLITE_SCHEMA_H_
