#include "service/job_store.h"

#include <sqlite3.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npuzzle {
namespace {

absl::Status SqliteError(sqlite3* db, absl::string_view what) {
  return absl::InternalError(absl::StrCat("job store: ", what, ": ", sqlite3_errmsg(db)));
}

// A prepared statement, finalized when it goes out of scope.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() { return stmt_; }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, const std::string& v) { sqlite3_bind_text(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT); }
  void BindBlob(int i, const std::string& v) { sqlite3_bind_blob(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT); }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }
  int Step() { return sqlite3_step(stmt_); }
  int64_t Int(int col) { return sqlite3_column_int64(stmt_, col); }
  bool ParseJob(int col, v1::Job* job) {
    return job->ParseFromArray(sqlite3_column_blob(stmt_, col), sqlite3_column_bytes(stmt_, col));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

bool HasLabels(const v1::Job& job, const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : labels) {
    auto it = job.spec().labels().find(k);
    if (it == job.spec().labels().end() || it->second != v) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path, bool full_sync) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    absl::Status s = absl::FailedPreconditionError(
        absl::StrCat("cannot open the job store ", path, ": ", db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<JobStore> store(new JobStore(db));
  absl::MutexLock lock(&store->mu_);
  for (const char* sql : {
           "PRAGMA journal_mode=WAL",
           full_sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
           "PRAGMA busy_timeout=5000",
           "CREATE TABLE IF NOT EXISTS jobs ("
           "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
           "  id TEXT NOT NULL UNIQUE,"
           "  request_id TEXT UNIQUE,"
           "  state INTEGER NOT NULL,"
           "  job BLOB NOT NULL)",
           "CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, seq)",
       }) {
    if (absl::Status s = store->Exec(sql); !s.ok()) return s;
  }
  return store;
}

JobStore::~JobStore() {
  absl::MutexLock lock(&mu_);
  sqlite3_close(db_);
}

absl::Status JobStore::Exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    absl::Status s = absl::InternalError(absl::StrCat("job store: ", sql, ": ", error ? error : "?"));
    sqlite3_free(error);
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<JobStore::Inserted> JobStore::Insert(const v1::Job& job) {
  absl::MutexLock lock(&mu_);
  const std::string& request_id = job.spec().request_id();
  if (!request_id.empty()) {
    Statement find(db_, "SELECT job, seq FROM jobs WHERE request_id = ?");
    find.Bind(1, request_id);
    if (find.Step() == SQLITE_ROW) {
      Inserted known;
      if (!find.ParseJob(0, &known.job)) return absl::DataLossError("job store: unreadable job row");
      known.seq = find.Int(1);
      return known;
    }
  }
  Statement insert(db_, "INSERT INTO jobs (id, request_id, state, job) VALUES (?, ?, ?, ?)");
  if (!insert.ok()) return SqliteError(db_, "prepare insert");
  insert.Bind(1, job.id());
  if (request_id.empty()) {
    insert.BindNull(2);
  } else {
    insert.Bind(2, request_id);
  }
  insert.Bind(3, job.state());
  insert.BindBlob(4, job.SerializeAsString());
  if (insert.Step() != SQLITE_DONE) return SqliteError(db_, "insert");
  return Inserted{job, sqlite3_last_insert_rowid(db_), true};
}

absl::Status JobStore::Update(const v1::Job& job) {
  absl::MutexLock lock(&mu_);
  Statement update(db_, "UPDATE jobs SET state = ?, job = ? WHERE id = ?");
  if (!update.ok()) return SqliteError(db_, "prepare update");
  update.Bind(1, job.state());
  update.BindBlob(2, job.SerializeAsString());
  update.Bind(3, job.id());
  if (update.Step() != SQLITE_DONE) return SqliteError(db_, "update");
  if (sqlite3_changes(db_) != 1) return absl::NotFoundError(absl::StrCat("no job ", job.id()));
  return absl::OkStatus();
}

absl::StatusOr<v1::Job> JobStore::Get(const std::string& id) {
  absl::MutexLock lock(&mu_);
  Statement get(db_, "SELECT job FROM jobs WHERE id = ?");
  get.Bind(1, id);
  if (get.Step() != SQLITE_ROW) return absl::NotFoundError(absl::StrCat("no job with id '", id, "'"));
  v1::Job job;
  if (!get.ParseJob(0, &job)) return absl::DataLossError("job store: unreadable job row");
  return job;
}

absl::StatusOr<std::vector<JobStore::Row>> JobStore::Unfinished() {
  absl::MutexLock lock(&mu_);
  Statement q(db_, absl::StrCat("SELECT job, seq FROM jobs WHERE state IN (", v1::JOB_STATE_QUEUED, ", ",
                                v1::JOB_STATE_RUNNING, ") ORDER BY seq"));
  std::vector<Row> rows;
  while (q.Step() == SQLITE_ROW) {
    Row row;
    if (!q.ParseJob(0, &row.job)) return absl::DataLossError("job store: unreadable job row");
    row.seq = q.Int(1);
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<JobStore::Page> JobStore::List(const std::vector<v1::JobState>& states,
                                              const std::map<std::string, std::string>& labels, int page_size,
                                              int64_t before) {
  absl::MutexLock lock(&mu_);
  std::string sql = "SELECT job, seq FROM jobs WHERE seq < ?";
  if (!states.empty()) {
    absl::StrAppend(&sql, " AND state IN (",
                    absl::StrJoin(states, ",", [](std::string* out, v1::JobState s) { absl::StrAppend(out, s); }),
                    ")");
  }
  absl::StrAppend(&sql, " ORDER BY seq DESC");
  Statement q(db_, sql);
  if (!q.ok()) return SqliteError(db_, "prepare list");
  q.Bind(1, before > 0 ? before : INT64_MAX);
  Page page;
  int64_t last_seq = 0;
  // Labels live in the job message, so they are matched here; the scan
  // stops at the first match that no longer fits the page.
  while (q.Step() == SQLITE_ROW) {
    v1::Job job;
    if (!q.ParseJob(0, &job)) return absl::DataLossError("job store: unreadable job row");
    if (!HasLabels(job, labels)) continue;
    if (static_cast<int>(page.jobs.size()) == page_size) {
      page.next_before = last_seq;
      break;
    }
    page.jobs.push_back(std::move(job));
    last_seq = q.Int(1);
  }
  return page;
}

absl::StatusOr<std::map<v1::JobState, int64_t>> JobStore::CountByState() {
  absl::MutexLock lock(&mu_);
  Statement q(db_, "SELECT state, COUNT(*) FROM jobs GROUP BY state");
  std::map<v1::JobState, int64_t> counts;
  while (q.Step() == SQLITE_ROW) counts[static_cast<v1::JobState>(q.Int(0))] = q.Int(1);
  return counts;
}

}  // namespace npuzzle
