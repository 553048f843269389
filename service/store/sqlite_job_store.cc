#include "service/store/sqlite_job_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "service/store/list_page.h"
#include "service/store/sqlite_schema.h"
#include "service/store/sqlite_statement.h"
#include "service/store/wal_check.h"

namespace npuzzle {
namespace {

constexpr int kBusyTimeoutMs = 5000;

// The job stored at a seq, with one statement for a whole listing.
class JobAt {
 public:
  explicit JobAt(sqlite3* db) : db_(db), q_(db, "SELECT job FROM jobs WHERE seq = ?") {}
  absl::StatusOr<v1::Job> Read(int64_t seq) {
    if (!q_.ok()) return SqliteError(db_, "prepare a read");
    q_.Reset();
    q_.Bind(1, seq);
    const int rc = q_.Step();
    // Listings run in one read transaction, so a seq just found is there.
    if (rc != SQLITE_ROW) return SqliteError(db_, "read a job");
    v1::Job job;
    if (!q_.ParseJob(0, &job)) return absl::DataLossError("job store: unreadable job row");
    return job;
  }

 private:
  sqlite3* const db_;
  Statement q_;
};

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

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(const std::string& path, bool full_sync) {
  // Before SQLite reads the log, which it would cut short at the damage.
  absl::Status status = CheckWal(path + "-wal");
  if (!status.ok()) return Unusable(path, status);
  absl::StatusOr<sqlite3*> writer = OpenConnection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!writer.ok()) return writer.status();
  for (const char* sql : {
           // Takes effect only in a new file, and only before it is put in
           // WAL mode: pages that purges free go back to the file system
           // (PurgeFinished). An older file gets it in its upgrade.
           "PRAGMA auto_vacuum=INCREMENTAL",
           "PRAGMA journal_mode=WAL",
           full_sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
           // Folds the log into the file every 100 pages (400 KB), so that
           // little rides on the log should it be damaged (CheckWal).
           "PRAGMA wal_autocheckpoint=100",
       }) {
    if (status.ok()) status = Exec(*writer, sql);
  }

  // The reader opens once the file is in WAL mode, in which its reads see
  // the last commit and never block the writer.
  // A third serves metrics, whose counts walk whole indexes, so that they
  // never hold up a reader that a client waits for.
  absl::StatusOr<sqlite3*> reader = OpenConnection(path, SQLITE_OPEN_READWRITE);
  absl::StatusOr<sqlite3*> stats = OpenConnection(path, SQLITE_OPEN_READWRITE);
  if (!reader.ok() || !stats.ok()) {
    for (auto* db : {&writer, &reader, &stats}) {
      if (db->ok()) sqlite3_close(**db);
    }
    return reader.ok() ? stats.status() : reader.status();
  }
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(*writer, *reader, *stats));
  store->dir_ = std::filesystem::absolute(path).parent_path().string();
  absl::MutexLock lock(&store->write_mu_);
  if (status.ok()) status = store->CheckIntegrity();
  if (status.ok()) status = CreateOrUpgradeSchema(store->writer_);
  if (status.ok()) status = store->CheckIdentity(std::filesystem::path(path).parent_path() / kIdentityFile);
  if (status.ok()) status = store->LoadSecret();
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
  absl::StatusOr<std::string> id = ReadMeta("store_id");
  if (!id.ok()) return id.status();
  if (!remembered.empty() && *id != remembered) {
    return absl::DataLossError(
        absl::StrCat("this data directory held job store ", remembered, ", but the file is ",
                     id->empty() ? "a new, empty one" : absl::StrCat("another store (", *id, ")")));
  }
  if (id->empty()) {
    id = RandomHex(2);
    if (absl::Status s = WriteMeta("store_id", *id); !s.ok()) return s;
  }
  if (remembered.empty()) {
    // Temporary file, fsync, rename: a crash leaves the old file or the new.
    const std::string temporary = identity_file.string() + ".tmp";
    const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::string line = *id + "\n";
    const bool written =
        fd >= 0 && write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && fsync(fd) == 0;
    if (fd >= 0) close(fd);
    if (!written || rename(temporary.c_str(), identity_file.c_str()) != 0) {
      return absl::InternalError(absl::StrCat("cannot write ", identity_file.string(), ": ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SqliteJobStore::ReadMeta(const char* key) {
  Statement get(writer_, "SELECT value FROM meta WHERE key = ?");
  if (!get.ok()) return SqliteError(writer_, "prepare a meta read");
  get.Bind(1, std::string(key));
  const int rc = get.Step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError(writer_, key);
  return rc == SQLITE_ROW ? get.Text(0) : "";
}

absl::Status SqliteJobStore::WriteMeta(const char* key, const std::string& value) {
  Statement put(writer_, "INSERT INTO meta (key, value) VALUES (?, ?)");
  put.Bind(1, std::string(key));
  put.Bind(2, value);
  return put.Run() ? absl::OkStatus() : SqliteError(writer_, absl::StrCat("write ", key));
}

std::string SqliteJobStore::RandomHex(int words) {
  absl::BitGen gen;
  std::string hex;
  for (int i = 0; i < words; ++i) absl::StrAppendFormat(&hex, "%016x", absl::Uniform<uint64_t>(gen));
  return hex;
}

absl::Status SqliteJobStore::LoadSecret() {
  absl::StatusOr<std::string> secret = ReadMeta("secret");
  if (!secret.ok()) return secret.status();
  if (secret->empty()) {
    secret = RandomHex(4);
    if (absl::Status s = WriteMeta("secret", *secret); !s.ok()) return s;
  }
  secret_ = *secret;
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
                           {&insert_,
                            "INSERT INTO jobs (seq, id, request_id, state, job, tenant, finished, expires) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"},
                           {&insert_label_, kInsertLabelSql},
                           {&update_, "UPDATE jobs SET state = ?, job = ?, finished = ?, expires = ? WHERE id = ?"}}) {
    if (sqlite3_prepare_v3(writer_, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) != SQLITE_OK) {
      return SqliteError(writer_, absl::StrCat("prepare ", sql));
    }
  }
  return absl::OkStatus();
}

SqliteJobStore::~SqliteJobStore() {
  absl::MutexLock write_lock(&write_mu_);
  absl::MutexLock read_lock(&read_mu_);
  absl::MutexLock stats_lock(&stats_mu_);
  sqlite3_close(stats_);
  for (sqlite3_stmt* stmt : {begin_, commit_, insert_, insert_label_, update_}) sqlite3_finalize(stmt);
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
  const DerivedColumns derived = DeriveColumns(job);
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
    insert.Bind(6, job.tenant());
    insert.BindOrNull(7, derived.finished);
    insert.BindOrNull(8, derived.expires);
    if (insert.Step() != SQLITE_DONE) {
      if (sqlite3_errcode(writer_) == SQLITE_CONSTRAINT) {
        return absl::AlreadyExistsError(
            absl::StrCat("job store: job ", ShownId(job.id()), " or its request id is taken"));
      }
      return SqliteError(writer_, "insert");
    }
    return InsertLabels(writer_, insert_label_, job, change.seq);
  }
  Statement update(update_);
  update.Bind(1, job.state());
  update.BindBlob(2, blob);
  update.BindOrNull(3, derived.finished);
  update.BindOrNull(4, derived.expires);
  update.Bind(5, job.id());
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
  // One snapshot for the whole page: a job changing state between two of
  // the queries below is seen once, in one state.
  if (absl::Status s = Exec(reader_, "BEGIN"); !s.ok()) return s;
  absl::StatusOr<Page> page = labels.empty() ? ListByState(tenant, states, page_size, before)
                                             : ListByLabel(tenant, states, labels, page_size, before);
  Exec(reader_, "COMMIT").IgnoreError();  // a read transaction: nothing to lose
  return page;
}

// Without a state filter, the tenant's newest jobs are one range of
// jobs_by_tenant. With one, each state's newest jobs are a range of
// jobs_by_state, all tenants' (an index with the tenant in it would change
// with every change of state, which costs every job more than listings
// are worth), walked with a budget of kMaxListScan rows in all; the page
// then holds only what is known: the jobs above the highest point where a
// walk stopped, and says to go on from there.
absl::StatusOr<JobStore::Page> SqliteJobStore::ListByState(const std::string& tenant,
                                                           const std::vector<v1::JobState>& states, int page_size,
                                                           int64_t before) {
  const int64_t below = before > 0 ? before : INT64_MAX;
  std::vector<int64_t> seqs;
  int64_t known_down_to = 0;  // every match at or above this seq is in `seqs`
  if (states.empty()) {
    Statement newest(reader_, "SELECT seq FROM jobs WHERE tenant = ? AND seq < ? ORDER BY seq DESC LIMIT ?");
    if (!newest.ok()) return SqliteError(reader_, "prepare list");
    newest.Bind(1, tenant);
    newest.Bind(2, below);
    newest.Bind(3, static_cast<int64_t>(page_size) + 1);
    int rc;
    while ((rc = newest.Step()) == SQLITE_ROW) seqs.push_back(newest.Int(0));
    if (absl::Status s = EndOfRows(reader_, rc, "list"); !s.ok()) return s;
  } else {
    Statement newest(reader_, "SELECT seq, tenant FROM jobs WHERE state = ? AND seq < ? ORDER BY seq DESC");
    if (!newest.ok()) return SqliteError(reader_, "prepare list");
    const int budget = std::max(1, kMaxListScan / static_cast<int>(states.size()));
    for (v1::JobState state : states) {
      newest.Reset();
      newest.Bind(1, static_cast<int64_t>(state));
      newest.Bind(2, below);
      int matched = 0, scanned = 0, rc;
      while ((rc = newest.Step()) == SQLITE_ROW) {
        const int64_t seq = newest.Int(0);
        if (newest.Text(1) == tenant) {
          seqs.push_back(seq);
          ++matched;
        }
        // A page's worth of this state's jobs, or the budget: what lies
        // below is not known.
        if (matched > page_size || ++scanned == budget) {
          known_down_to = std::max(known_down_to, seq);
          break;
        }
      }
      if (rc != SQLITE_ROW) {
        if (absl::Status s = EndOfRows(reader_, rc, "list"); !s.ok()) return s;
      }
    }
    std::sort(seqs.begin(), seqs.end(), std::greater<>());
    seqs.erase(std::find_if(seqs.begin(), seqs.end(), [&](int64_t seq) { return seq < known_down_to; }), seqs.end());
  }
  JobAt at(reader_);
  Page page;
  size_t bytes = 0;
  for (int64_t seq : seqs) {
    if (static_cast<int>(page.jobs.size()) == page_size) return page;
    absl::StatusOr<v1::Job> job = at.Read(seq);
    if (!job.ok()) return job.status();
    const size_t job_bytes = job->ByteSizeLong();
    if (!page.jobs.empty() && bytes + job_bytes > kMaxPageBytes) return page;
    bytes += job_bytes;
    page.jobs.push_back(*std::move(job));
    page.next_before = seq;
  }
  page.next_before = known_down_to;
  return page;
}

// The first label's rows (job_labels) are the candidates, newest first.
// The other labels (a primary-key probe of job_labels each) and the states
// (the job's row) are checked by SQLite, so only matching jobs are read and
// parsed: a walk through non-matches costs index probes, not jobs. A rare
// combination could still make this a long walk, so it stops after
// kMaxListScan candidates and the page says where to go on.
absl::StatusOr<JobStore::Page> SqliteJobStore::ListByLabel(const std::string& tenant,
                                                           const std::vector<v1::JobState>& states,
                                                           const std::map<std::string, std::string>& labels,
                                                           int page_size, int64_t before) {
  std::string matches = "1";
  for (size_t i = 1; i < labels.size(); ++i) {
    absl::StrAppend(&matches, " AND EXISTS (SELECT 1 FROM job_labels m WHERE m.tenant = ?1 AND m.key = ?", 4 + 2 * i,
                    " AND m.value = ?", 5 + 2 * i, " AND m.seq = l.seq)");
  }
  if (!states.empty()) {
    // States are enum numbers, written into the text rather than bound.
    absl::StrAppend(&matches, " AND (SELECT state FROM jobs j WHERE j.seq = l.seq) IN (",
                    absl::StrJoin(states, ", ",
                                  [](std::string* out, v1::JobState s) { absl::StrAppend(out, static_cast<int>(s)); }),
                    ")");
  }
  Statement candidates(reader_, absl::StrCat("SELECT l.seq, ", matches,
                                             " FROM job_labels l WHERE l.tenant = ?1 AND l.key = ?2 AND l.value = ?3 "
                                             "AND l.seq < ?4 ORDER BY l.seq DESC"));
  if (!candidates.ok()) return SqliteError(reader_, "prepare list");
  candidates.Bind(1, tenant);
  candidates.Bind(4, before > 0 ? before : INT64_MAX);
  // Label i's key and value at the numbers the text above gave them: the
  // first at ?2 and ?3, the others after ?4 (the seq bound).
  size_t i = 0;
  for (const auto& [key, value] : labels) {
    const int key_at = i == 0 ? 2 : static_cast<int>(4 + 2 * i);
    candidates.Bind(key_at, key);
    candidates.Bind(key_at + 1, value);
    ++i;
  }
  JobAt at(reader_);
  ListPage page(page_size, states, labels);
  int scanned = 0;
  int rc;
  while ((rc = candidates.Step()) == SQLITE_ROW) {
    if (scanned++ == kMaxListScan) return std::move(page).Finish(/*walked_to_end=*/false);
    const int64_t seq = candidates.Int(0);
    std::optional<v1::Job> job;
    if (candidates.Int(1) != 0) {
      absl::StatusOr<v1::Job> read = at.Read(seq);
      if (!read.ok()) return read.status();
      job = *std::move(read);
    }
    if (!page.Add(seq, job ? &*job : nullptr)) return std::move(page).Finish(/*walked_to_end=*/false);
  }
  if (absl::Status s = EndOfRows(reader_, rc, "list"); !s.ok()) return s;
  return std::move(page).Finish(/*walked_to_end=*/true);
}

absl::Status SqliteJobStore::CheckWritable(absl::Duration wait) {
  // A write that fits in the log's existing pages succeeds on a full disk,
  // so the space is checked as well as a write tried.
  struct statvfs disk {};
  if (statvfs(dir_.c_str(), &disk) == 0) {
    const uint64_t free_bytes = static_cast<uint64_t>(disk.f_bavail) * disk.f_frsize;
    if (free_bytes < kMinFreeBytes) {
      return absl::UnavailableError(
          absl::StrCat("job store: the disk holding ", dir_, " is full (", free_bytes, " bytes free)"));
    }
  }
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
  absl::MutexLock lock(&stats_mu_);
  Statement q(stats_, "SELECT state, COUNT(*) FROM jobs GROUP BY state");
  if (!q.ok()) return SqliteError(stats_, "prepare count");
  std::map<v1::JobState, int64_t> counts;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) counts[static_cast<v1::JobState>(q.Int(0))] = q.Int(1);
  if (absl::Status s = EndOfRows(stats_, rc, "count"); !s.ok()) return s;
  return counts;
}

absl::StatusOr<int> SqliteJobStore::PurgeFinished(absl::Time now, absl::Duration retain, int limit) {
  absl::MutexLock lock(&write_mu_);
  // Two index ranges: jobs_by_expiry and jobs_by_finished.
  Statement purge(writer_,
                  "DELETE FROM jobs WHERE seq IN (SELECT seq FROM jobs WHERE expires < ?1 "
                  "UNION SELECT seq FROM jobs WHERE finished < ?2 LIMIT ?3)");
  if (!purge.ok()) return SqliteError(writer_, "prepare purge");
  purge.Bind(1, absl::ToUnixSeconds(now));
  purge.Bind(2, retain > absl::ZeroDuration() ? absl::ToUnixSeconds(now - retain) : INT64_MIN);
  purge.Bind(3, static_cast<int64_t>(limit));
  if (!purge.Run()) return SqliteError(writer_, "purge");
  const int deleted = sqlite3_changes(writer_);
  // The pages the rows held go back to the file system, a batch's worth at
  // a time, so the file shrinks as the store does.
  if (deleted > 0) {
    if (absl::Status s = Exec(writer_, "PRAGMA incremental_vacuum"); !s.ok()) return s;
  }
  return deleted;
}

absl::StatusOr<JobStore::Usage> SqliteJobStore::DiskUsage() {
  absl::MutexLock lock(&stats_mu_);
  Statement q(stats_,
              "SELECT page_count * page_size, freelist_count * page_size FROM pragma_page_count(), "
              "pragma_freelist_count(), pragma_page_size()");
  if (!q.ok() || q.Step() != SQLITE_ROW) return SqliteError(stats_, "disk usage");
  return Usage{.bytes = q.Int(0), .free_bytes = q.Int(1)};
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
