#include "service/store/sqlite_schema.h"

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "service/store/job_store.h"
#include "service/store/sqlite_statement.h"

namespace npuzzle {
namespace {

// PRAGMA user_version. Version 1 (user_version 0, written before this
// file existed) had the jobs table without tenant, finished and expires,
// no label table and no auto-vacuum.
constexpr int kSqliteSchemaVersion = 2;

constexpr const char* kIndexes[] = {
    "CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, seq)",
    "CREATE INDEX IF NOT EXISTS jobs_by_tenant ON jobs (tenant, seq)",
    "CREATE INDEX IF NOT EXISTS jobs_by_finished ON jobs (finished) WHERE finished IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS jobs_by_expiry ON jobs (expires) WHERE expires IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS job_labels ("
    "  tenant TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, seq INTEGER NOT NULL,"
    "  PRIMARY KEY (tenant, key, value, seq)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS job_labels_by_seq ON job_labels (seq)",
    "CREATE TRIGGER IF NOT EXISTS job_labels_go_with_their_job AFTER DELETE ON jobs BEGIN"
    "  DELETE FROM job_labels WHERE seq = old.seq; END",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
};

absl::StatusOr<int> IntPragma(sqlite3* db, const char* sql) {
  Statement q(db, sql);
  if (!q.ok() || q.Step() != SQLITE_ROW) return SqliteError(db, sql);
  return static_cast<int>(q.Int(0));
}

absl::Status CreateTables(sqlite3* db) {
  if (absl::Status s = Exec(db,
                            "CREATE TABLE jobs ("
                            "  seq INTEGER PRIMARY KEY,"
                            "  id TEXT NOT NULL UNIQUE,"
                            "  request_id TEXT UNIQUE,"
                            "  state INTEGER NOT NULL,"
                            "  job BLOB NOT NULL,"
                            "  tenant TEXT NOT NULL DEFAULT '',"
                            "  finished INTEGER,"
                            "  expires INTEGER)");
      !s.ok()) {
    return s;
  }
  for (const char* sql : kIndexes) {
    if (absl::Status s = Exec(db, sql); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Version 1 to 2: the new columns and the label rows, read from each job.
absl::Status UpgradeFromVersion1(sqlite3* db) {
  for (const char* sql :
       {"ALTER TABLE jobs ADD COLUMN tenant TEXT NOT NULL DEFAULT ''", "ALTER TABLE jobs ADD COLUMN finished INTEGER",
        "ALTER TABLE jobs ADD COLUMN expires INTEGER"}) {
    if (absl::Status s = Exec(db, sql); !s.ok()) return s;
  }
  for (const char* sql : kIndexes) {
    if (absl::Status s = Exec(db, sql); !s.ok()) return s;
  }
  Statement rows(db, "SELECT seq, job FROM jobs");
  Statement update(db, "UPDATE jobs SET tenant = ?, finished = ?, expires = ? WHERE seq = ?");
  sqlite3_stmt* insert_label = nullptr;
  if (sqlite3_prepare_v2(db, kInsertLabelSql, -1, &insert_label, nullptr) != SQLITE_OK) {
    return SqliteError(db, "prepare label insert");
  }
  absl::Status status = rows.ok() && update.ok() ? absl::OkStatus() : SqliteError(db, "prepare upgrade");
  int rc = SQLITE_DONE;
  while (status.ok() && (rc = rows.Step()) == SQLITE_ROW) {
    v1::Job job;
    if (!rows.ParseJob(1, &job)) {
      status = absl::DataLossError("job store: unreadable job row");
      break;
    }
    const DerivedColumns derived = DeriveColumns(job);
    update.Bind(1, job.tenant());
    update.BindOrNull(2, derived.finished);
    update.BindOrNull(3, derived.expires);
    update.Bind(4, rows.Int(0));
    if (!update.Run()) status = SqliteError(db, "upgrade a job");
    update.Reset();
    if (status.ok()) status = InsertLabels(db, insert_label, job, rows.Int(0));
  }
  if (status.ok()) status = EndOfRows(db, rc, "upgrade");
  sqlite3_finalize(insert_label);
  return status;
}

}  // namespace

absl::Status InsertLabels(sqlite3* db, sqlite3_stmt* insert_label, const v1::Job& job, int64_t seq) {
  for (const auto& [key, value] : job.spec().labels()) {
    Statement insert(insert_label);
    insert.Bind(1, job.tenant());
    insert.Bind(2, key);
    insert.Bind(3, value);
    insert.Bind(4, seq);
    if (insert.Step() != SQLITE_DONE) return SqliteError(db, "insert a label");
  }
  return absl::OkStatus();
}

absl::Status CreateOrUpgradeSchema(sqlite3* db) {
  absl::StatusOr<int> version = IntPragma(db, "PRAGMA user_version");
  if (!version.ok()) return version.status();
  if (*version == kSqliteSchemaVersion) return absl::OkStatus();
  if (*version > kSqliteSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat("it was written by a newer npuzzle-server (schema version ",
                                                      *version, "; this one reads up to ", kSqliteSchemaVersion, ")"));
  }
  absl::StatusOr<int> tables = IntPragma(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'jobs'");
  if (!tables.ok()) return tables.status();
  const bool upgrade = *tables > 0;
  if (absl::Status s = Exec(db, "BEGIN IMMEDIATE"); !s.ok()) return s;
  absl::Status status = upgrade ? UpgradeFromVersion1(db) : CreateTables(db);
  if (status.ok()) status = Exec(db, absl::StrCat("PRAGMA user_version=", kSqliteSchemaVersion).c_str());
  if (status.ok()) status = Exec(db, "COMMIT");
  if (!status.ok()) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  }
  // An upgraded file turns on auto-vacuum (a new one has it from its
  // first page: SqliteJobStore::Open), which takes a full VACUUM once.
  if (upgrade) {
    if (absl::Status s = Exec(db, "PRAGMA auto_vacuum=INCREMENTAL"); !s.ok()) return s;
    return Exec(db, "VACUUM");
  }
  return absl::OkStatus();
}

}  // namespace npuzzle
