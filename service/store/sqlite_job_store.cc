#include "service/store/sqlite_job_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "service/store/wal_check.h"

namespace npuzzle {
namespace {

constexpr int kBusyTimeoutMs = 5000;

// Every SQLite failure reaches the caller as an error: never as "no rows"
// or NOT_FOUND. A damaged file is DATA_LOSS, so callers and operators can
// tell it from a passing fault.
absl::Status SqliteError(sqlite3* db, absl::string_view what) {
  const int code = sqlite3_errcode(db);
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
    return absl::DataLossError(absl::StrCat("job store: ", what, ": the file is damaged (", sqlite3_errmsg(db), ")"));
  }
  // A full disk or an I/O error may pass: clients may retry.
  if ((code & 0xff) == SQLITE_FULL || (code & 0xff) == SQLITE_IOERR) {
    return absl::UnavailableError(absl::StrCat("job store: ", what, ": ", sqlite3_errmsg(db)));
  }
  return absl::InternalError(absl::StrCat("job store: ", what, ": ", sqlite3_errmsg(db)));
}

// What ended a row loop: nothing if the rows simply ran out.
absl::Status EndOfRows(sqlite3* db, int rc, absl::string_view what) {
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db, what);
}

// A prepared statement: prepared here and finalized when it goes out of
// scope, or borrowed from the store's cache and reset for its next use.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  explicit Statement(sqlite3_stmt* cached) : stmt_(cached), cached_(true) {}
  ~Statement() {
    if (!cached_) {
      sqlite3_finalize(stmt_);
    } else if (stmt_ != nullptr) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, const std::string& v) { sqlite3_bind_text(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT); }
  void BindBlob(int i, const std::string& v) { sqlite3_bind_blob(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT); }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }
  int Step() { return sqlite3_step(stmt_); }
  int64_t Int(int col) { return sqlite3_column_int64(stmt_, col); }
  std::string Text(int col) {
    const unsigned char* text = sqlite3_column_text(stmt_, col);
    return text == nullptr ? "" : reinterpret_cast<const char*>(text);
  }
  bool ParseJob(int col, v1::Job* job) {
    return job->ParseFromArray(sqlite3_column_blob(stmt_, col), sqlite3_column_bytes(stmt_, col));
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  bool cached_ = false;
};

// The request_id column: request ids are scoped per tenant. The unnamed
// tenant (no --auth-tokens) keeps the bare id, as stores written before
// tenants existed have; named tenants hold no newline, so keys of two
// tenants never meet.
std::string RequestKey(const std::string& tenant, const std::string& request_id) {
  return tenant.empty() ? request_id : absl::StrCat(tenant, "\n", request_id);
}

bool HasLabels(const v1::Job& job, const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : labels) {
    auto it = job.spec().labels().find(k);
    if (it == job.spec().labels().end() || it->second != v) return false;
  }
  return true;
}

}  // namespace

namespace {

absl::StatusOr<sqlite3*> OpenConnection(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    absl::Status s = absl::FailedPreconditionError(
        absl::StrCat("cannot open the job store ", path, ": ", db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return s;
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  return db;
}

// Why the store at `path` cannot be used, and what the operator can do.
absl::Status Unusable(const std::string& path, const absl::Status& why) {
  return absl::FailedPreconditionError(
      absl::StrCat("job store ", path, " cannot be used: ", why.message(),
                   ". Restore it from a backup (npuzzle-server backup; see docs/operations.md), or move the data "
                   "directory's jobs.db* and ",
                   SqliteJobStore::kIdentityFile, " aside to start an empty store."));
}

absl::Status Exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    absl::Status s = SqliteError(db, absl::StrCat(sql, " (", error ? error : "?", ")"));
    sqlite3_free(error);
    return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(const std::string& path, bool full_sync) {
  // Before SQLite reads the log, which it would cut short at the damage.
  absl::Status status = CheckWal(path + "-wal");
  if (!status.ok()) return Unusable(path, status);
  absl::StatusOr<sqlite3*> writer = OpenConnection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!writer.ok()) return writer.status();
  for (const char* sql : {
           "PRAGMA journal_mode=WAL",
           full_sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
       }) {
    if (status.ok()) status = Exec(*writer, sql);
  }
  // The reader opens once the file is in WAL mode, in which its reads see
  // the last commit and never block the writer.
  absl::StatusOr<sqlite3*> reader = OpenConnection(path, SQLITE_OPEN_READWRITE);
  if (!reader.ok()) {
    sqlite3_close(*writer);
    return reader.status();
  }
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(*writer, *reader));
  absl::MutexLock lock(&store->write_mu_);
  if (status.ok()) status = store->CheckIntegrity();
  for (const char* sql : {
           "CREATE TABLE IF NOT EXISTS jobs ("
           "  seq INTEGER PRIMARY KEY,"
           "  id TEXT NOT NULL UNIQUE,"
           "  request_id TEXT UNIQUE,"
           "  state INTEGER NOT NULL,"
           "  job BLOB NOT NULL)",
           "CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, seq)",
           "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
       }) {
    if (status.ok()) status = Exec(store->writer_, sql);
  }
  if (status.ok()) status = store->CheckIdentity(std::filesystem::path(path).parent_path() / kIdentityFile);
  if (status.ok()) status = store->PrepareWrites();
  if (!status.ok()) return Unusable(path, status);
  return store;
}

absl::Status SqliteJobStore::CheckIntegrity() {
  Statement check(writer_, "PRAGMA quick_check");
  if (!check.ok()) return SqliteError(writer_, "integrity check");
  std::vector<std::string> problems;
  int rc;
  while ((rc = check.Step()) == SQLITE_ROW) {
    const std::string line = check.Text(0);
    if (line != "ok" && problems.size() < 3) problems.push_back(line);
  }
  if (absl::Status s = EndOfRows(writer_, rc, "integrity check"); !s.ok()) return s;
  if (!problems.empty()) {
    return absl::DataLossError(absl::StrCat("it is damaged (", absl::StrJoin(problems, "; "), ")"));
  }
  return absl::OkStatus();
}

// The directory remembers which store it held, so that a jobs.db emptied,
// deleted or swapped for another is noticed instead of served as a fresh
// store with every job gone.
absl::Status SqliteJobStore::CheckIdentity(const std::filesystem::path& identity_file) {
  std::string remembered;
  std::ifstream(identity_file) >> remembered;
  Statement get(writer_, "SELECT value FROM meta WHERE key = 'store_id'");
  if (!get.ok()) return SqliteError(writer_, "prepare identity");
  const int rc = get.Step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError(writer_, "identity");
  std::string id = rc == SQLITE_ROW ? get.Text(0) : "";
  if (!remembered.empty() && id != remembered) {
    return absl::DataLossError(
        absl::StrCat("this data directory held job store ", remembered, ", but the file is ",
                     id.empty() ? "a new, empty one" : absl::StrCat("another store (", id, ")")));
  }
  if (id.empty()) {
    id =
        absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(absl::BitGen()), absl::Uniform<uint64_t>(absl::BitGen()));
    Statement put(writer_, "INSERT INTO meta (key, value) VALUES ('store_id', ?)");
    if (!put.ok()) return SqliteError(writer_, "prepare identity");
    put.Bind(1, id);
    if (put.Step() != SQLITE_DONE) return SqliteError(writer_, "write identity");
  }
  if (remembered.empty()) {
    // Temporary file, fsync, rename: a crash leaves the old file or the new.
    const std::string temporary = identity_file.string() + ".tmp";
    const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::string line = id + "\n";
    const bool written =
        fd >= 0 && write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && fsync(fd) == 0;
    if (fd >= 0) close(fd);
    if (!written || rename(temporary.c_str(), identity_file.c_str()) != 0) {
      return absl::InternalError(absl::StrCat("cannot write ", identity_file.string(), ": ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::Status SqliteJobStore::Backup(const std::string& path, const std::string& to) {
  sqlite3* source = nullptr;
  sqlite3* target = nullptr;
  const std::string temporary = to + ".tmp";
  absl::Status status;
  if (sqlite3_open_v2(path.c_str(), &source, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    status = absl::FailedPreconditionError(absl::StrCat("cannot open ", path, ": ", sqlite3_errmsg(source)));
  } else if (sqlite3_open(temporary.c_str(), &target) != SQLITE_OK) {
    status = absl::FailedPreconditionError(absl::StrCat("cannot create ", temporary, ": ", sqlite3_errmsg(target)));
  } else {
    sqlite3_busy_timeout(source, 5000);
    // One step copies everything from one consistent snapshot, while the
    // running server goes on writing to its WAL.
    sqlite3_backup* backup = sqlite3_backup_init(target, "main", source, "main");
    const int rc = backup == nullptr ? sqlite3_errcode(target) : sqlite3_backup_step(backup, -1);
    sqlite3_backup_finish(backup);
    if (rc != SQLITE_DONE) {
      status = absl::InternalError(absl::StrCat("backup of ", path, " failed: ", sqlite3_errstr(rc)));
    }
  }
  sqlite3_close(source);
  sqlite3_close(target);
  if (status.ok() && rename(temporary.c_str(), to.c_str()) != 0) {
    status = absl::InternalError(absl::StrCat("cannot rename ", temporary, " to ", to, ": ", strerror(errno)));
  }
  if (!status.ok()) unlink(temporary.c_str());
  return status;
}

absl::Status SqliteJobStore::PrepareWrites() {
  for (auto [stmt, sql] : {std::pair{&begin_, "BEGIN IMMEDIATE"},
                           {&commit_, "COMMIT"},
                           {&insert_, "INSERT INTO jobs (seq, id, request_id, state, job) VALUES (?, ?, ?, ?, ?)"},
                           {&update_, "UPDATE jobs SET state = ?, job = ? WHERE id = ?"}}) {
    if (sqlite3_prepare_v3(writer_, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) != SQLITE_OK) {
      return SqliteError(writer_, absl::StrCat("prepare ", sql));
    }
  }
  return absl::OkStatus();
}

SqliteJobStore::~SqliteJobStore() {
  absl::MutexLock write_lock(&write_mu_);
  absl::MutexLock read_lock(&read_mu_);
  for (sqlite3_stmt* stmt : {begin_, commit_, insert_, update_}) sqlite3_finalize(stmt);
  sqlite3_close(reader_);
  sqlite3_close(writer_);
}

absl::StatusOr<JobStore::Row> SqliteJobStore::FindRow(const char* column, const std::string& value,
                                                      absl::string_view missing) {
  Statement find(reader_, absl::StrCat("SELECT job, seq FROM jobs WHERE ", column, " = ?"));
  if (!find.ok()) return SqliteError(reader_, "prepare find");
  find.Bind(1, value);
  const int rc = find.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError(missing);
  if (rc != SQLITE_ROW) return SqliteError(reader_, "find");
  Row row;
  if (!find.ParseJob(0, &row.job)) return absl::DataLossError("job store: unreadable job row");
  row.seq = find.Int(1);
  return row;
}

std::vector<absl::Status> SqliteJobStore::Commit(const std::vector<Change>& changes) {
  absl::MutexLock lock(&write_mu_);
  std::vector<absl::Status> outcomes;
  absl::Status failed = Step(begin_, "begin");
  for (const Change& change : changes) {
    if (!failed.ok()) break;
    absl::Status outcome = Apply(change);
    const bool own = outcome.ok() || absl::IsAlreadyExists(outcome) || absl::IsNotFound(outcome);
    if (!own) failed = outcome;
    outcomes.push_back(std::move(outcome));
  }
  if (failed.ok()) failed = Step(commit_, "commit");
  if (!failed.ok()) {
    if (!sqlite3_get_autocommit(writer_)) sqlite3_exec(writer_, "ROLLBACK", nullptr, nullptr, nullptr);
    outcomes.assign(changes.size(), failed);
  }
  return outcomes;
}

absl::Status SqliteJobStore::Step(sqlite3_stmt* stmt, absl::string_view what) {
  Statement statement(stmt);
  return statement.Step() == SQLITE_DONE ? absl::OkStatus() : SqliteError(writer_, what);
}

absl::Status SqliteJobStore::Apply(const Change& change) {
  const v1::Job& job = change.job;
  const std::string blob = job.SerializeAsString();
  if (change.seq > 0) {
    Statement insert(insert_);
    insert.Bind(1, change.seq);
    insert.Bind(2, job.id());
    if (job.spec().request_id().empty()) {
      insert.BindNull(3);
    } else {
      insert.Bind(3, RequestKey(job.tenant(), job.spec().request_id()));
    }
    insert.Bind(4, job.state());
    insert.BindBlob(5, blob);
    if (insert.Step() == SQLITE_DONE) return absl::OkStatus();
    if (sqlite3_errcode(writer_) == SQLITE_CONSTRAINT) {
      return absl::AlreadyExistsError(
          absl::StrCat("job store: job ", ShownId(job.id()), " or its request id is taken"));
    }
    return SqliteError(writer_, "insert");
  }
  Statement update(update_);
  update.Bind(1, job.state());
  update.BindBlob(2, blob);
  update.Bind(3, job.id());
  if (update.Step() != SQLITE_DONE) return SqliteError(writer_, "update");
  if (sqlite3_changes(writer_) != 1) return absl::NotFoundError(absl::StrCat("job store: no job ", ShownId(job.id())));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteJobStore::LastSeq() {
  absl::MutexLock lock(&read_mu_);
  Statement q(reader_, "SELECT COALESCE(MAX(seq), 0) FROM jobs");
  if (!q.ok()) return SqliteError(reader_, "prepare last seq");
  if (q.Step() != SQLITE_ROW) return SqliteError(reader_, "last seq");
  return q.Int(0);
}

absl::StatusOr<v1::Job> SqliteJobStore::FindByRequestId(const std::string& tenant, const std::string& request_id) {
  absl::MutexLock lock(&read_mu_);
  absl::StatusOr<Row> row = FindRow("request_id", RequestKey(tenant, request_id), "no job has this request id");
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::StatusOr<v1::Job> SqliteJobStore::Get(const std::string& id) {
  absl::MutexLock lock(&read_mu_);
  absl::StatusOr<Row> row = FindRow("id", id, NoSuchJob(id).message());
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::StatusOr<std::vector<JobStore::Row>> SqliteJobStore::Unfinished() {
  absl::MutexLock lock(&read_mu_);
  Statement q(reader_, absl::StrCat("SELECT job, seq FROM jobs WHERE state IN (", v1::JOB_STATE_QUEUED, ", ",
                                    v1::JOB_STATE_RUNNING, ") ORDER BY seq"));
  if (!q.ok()) return SqliteError(reader_, "prepare unfinished");
  std::vector<Row> rows;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    Row row;
    if (!q.ParseJob(0, &row.job)) return absl::DataLossError("job store: unreadable job row");
    row.seq = q.Int(1);
    rows.push_back(std::move(row));
  }
  if (absl::Status s = EndOfRows(reader_, rc, "unfinished"); !s.ok()) return s;
  return rows;
}

absl::StatusOr<JobStore::Page> SqliteJobStore::List(const std::string& tenant, const std::vector<v1::JobState>& states,
                                                    const std::map<std::string, std::string>& labels, int page_size,
                                                    int64_t before) {
  absl::MutexLock lock(&read_mu_);
  std::string sql = "SELECT job, seq FROM jobs WHERE seq < ?";
  if (!states.empty()) {
    absl::StrAppend(&sql, " AND state IN (",
                    absl::StrJoin(states, ",", [](std::string* out, v1::JobState s) { absl::StrAppend(out, s); }), ")");
  }
  absl::StrAppend(&sql, " ORDER BY seq DESC");
  Statement q(reader_, sql);
  if (!q.ok()) return SqliteError(reader_, "prepare list");
  q.Bind(1, before > 0 ? before : INT64_MAX);
  Page page;
  int64_t last_seq = 0;
  size_t bytes = 0;
  // Tenants and labels live in the job message, so they are matched here; the scan
  // stops at the first match that no longer fits the page, by count or by
  // size (a page always holds at least one job).
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    v1::Job job;
    if (!q.ParseJob(0, &job)) return absl::DataLossError("job store: unreadable job row");
    if (job.tenant() != tenant || !HasLabels(job, labels)) continue;
    const size_t job_bytes = job.ByteSizeLong();
    if (static_cast<int>(page.jobs.size()) == page_size || (!page.jobs.empty() && bytes + job_bytes > kMaxPageBytes)) {
      page.next_before = last_seq;
      return page;
    }
    bytes += job_bytes;
    page.jobs.push_back(std::move(job));
    last_seq = q.Int(1);
  }
  if (absl::Status s = EndOfRows(reader_, rc, "list"); !s.ok()) return s;
  return page;
}

absl::Status SqliteJobStore::CheckWritable(absl::Duration wait) {
  absl::MutexLock lock(&write_mu_);
  sqlite3_busy_timeout(writer_, static_cast<int>(absl::ToInt64Milliseconds(wait)));
  absl::Status status = Exec(writer_, "BEGIN IMMEDIATE");
  if (status.ok()) status = Exec(writer_, "UPDATE meta SET value = value WHERE key = 'store_id'");
  if (status.ok()) {
    status = Exec(writer_, "COMMIT");
  } else {
    sqlite3_exec(writer_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  sqlite3_busy_timeout(writer_, kBusyTimeoutMs);
  return status;
}

absl::StatusOr<std::map<v1::JobState, int64_t>> SqliteJobStore::CountByState() {
  absl::MutexLock lock(&read_mu_);
  Statement q(reader_, "SELECT state, COUNT(*) FROM jobs GROUP BY state");
  if (!q.ok()) return SqliteError(reader_, "prepare count");
  std::map<v1::JobState, int64_t> counts;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) counts[static_cast<v1::JobState>(q.Int(0))] = q.Int(1);
  if (absl::Status s = EndOfRows(reader_, rc, "count"); !s.ok()) return s;
  return counts;
}

absl::StatusOr<int> SqliteJobStore::PurgeFinished(absl::Time finished_before, int limit) {
  absl::MutexLock lock(&write_mu_);
  // Jobs finish in about the order they were submitted, so the oldest
  // submissions of each final state (an index range: jobs_by_state) hold
  // the ones to delete; a young one among them is kept for a later pass.
  std::vector<int64_t> doomed;
  for (v1::JobState state : {v1::JOB_STATE_DONE, v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED}) {
    Statement oldest(writer_, "SELECT seq, job FROM jobs WHERE state = ? ORDER BY seq LIMIT ?");
    if (!oldest.ok()) return SqliteError(writer_, "prepare purge");
    oldest.Bind(1, static_cast<int64_t>(state));
    oldest.Bind(2, static_cast<int64_t>(limit));
    int rc;
    while ((rc = oldest.Step()) == SQLITE_ROW) {
      v1::Job job;
      if (!oldest.ParseJob(1, &job)) return absl::DataLossError("job store: unreadable job row");
      const absl::Time finished = absl::FromUnixSeconds(job.finish_time().seconds());
      if (job.has_finish_time() && finished < finished_before) doomed.push_back(oldest.Int(0));
    }
    if (absl::Status s = EndOfRows(writer_, rc, "purge"); !s.ok()) return s;
  }
  if (doomed.empty()) return 0;
  if (absl::Status s = Step(begin_, "begin"); !s.ok()) return s;
  for (int64_t seq : doomed) {
    Statement erase(writer_, "DELETE FROM jobs WHERE seq = ?");
    erase.Bind(1, seq);
    if (!erase.ok() || erase.Step() != SQLITE_DONE) {
      absl::Status failed = SqliteError(writer_, "purge");
      sqlite3_exec(writer_, "ROLLBACK", nullptr, nullptr, nullptr);
      return failed;
    }
  }
  if (absl::Status s = Step(commit_, "commit"); !s.ok()) {
    sqlite3_exec(writer_, "ROLLBACK", nullptr, nullptr, nullptr);
    return s;
  }
  return static_cast<int>(doomed.size());
}

absl::Status SqliteJobStore::DeleteFinished(const std::string& id) {
  absl::MutexLock lock(&write_mu_);
  Statement erase(writer_, absl::StrCat("DELETE FROM jobs WHERE id = ? AND state IN (", v1::JOB_STATE_DONE, ", ",
                                        v1::JOB_STATE_FAILED, ", ", v1::JOB_STATE_CANCELLED, ")"));
  if (!erase.ok()) return SqliteError(writer_, "prepare delete");
  erase.Bind(1, id);
  if (erase.Step() != SQLITE_DONE) return SqliteError(writer_, "delete");
  if (sqlite3_changes(writer_) == 1) return absl::OkStatus();
  Statement find(writer_, "SELECT 1 FROM jobs WHERE id = ?");
  find.Bind(1, id);
  if (find.Step() == SQLITE_ROW) {
    return absl::FailedPreconditionError(absl::StrCat("job ", ShownId(id), " has not finished: cancel it first"));
  }
  return NoSuchJob(id);
}

}  // namespace npuzzle
