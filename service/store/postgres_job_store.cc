#include "service/store/postgres_job_store.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "service/store/list_page.h"

namespace npuzzle {
namespace {

// The tables' version, kept in npuzzle_meta; a store from a newer version
// is refused rather than misread.
constexpr int kPostgresSchemaVersion = 1;
// The meta key of what the active coordinator advertises (JobStore::Advertise).
constexpr const char* kActiveKey = "active_coordinator";
constexpr absl::Duration kActiveCoordinatorFirst = absl::Seconds(3);

// The same tables and indexes as SQLite's (sqlite_schema.cc), in
// PostgreSQL's types. Created in one transaction, under an advisory lock,
// so two processes opening a new database at once do not race.
constexpr const char* kSchema[] = {
    "CREATE TABLE IF NOT EXISTS npuzzle_meta (key text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS jobs (seq bigint PRIMARY KEY, id text NOT NULL UNIQUE, request_id text UNIQUE, "
    "state integer NOT NULL, tenant text NOT NULL, finished bigint, expires bigint, job bytea NOT NULL)",
    "CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, seq)",
    "CREATE INDEX IF NOT EXISTS jobs_by_tenant ON jobs (tenant, seq)",
    "CREATE INDEX IF NOT EXISTS jobs_by_finished ON jobs (finished) WHERE finished IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS jobs_by_expiry ON jobs (expires) WHERE expires IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS job_labels (tenant text NOT NULL, key text NOT NULL, value text NOT NULL, "
    "seq bigint NOT NULL REFERENCES jobs (seq) ON DELETE CASCADE, PRIMARY KEY (tenant, key, value, seq))",
    "CREATE INDEX IF NOT EXISTS job_labels_by_seq ON job_labels (seq)",
};

// Advisory lock keys (any 64-bit numbers no other program uses): one while
// the tables are made, one held by the coordinator for as long as it runs.
constexpr int64_t kSchemaLock = 0x6e70757a7a6c6501;
constexpr int64_t kCoordinatorLock = 0x6e70757a7a6c6502;

constexpr const char* kFinishedStates = "(3, 4, 5)";  // done, failed, cancelled
static_assert(v1::JOB_STATE_DONE == 3 && v1::JOB_STATE_FAILED == 4 && v1::JOB_STATE_CANCELLED == 5);

absl::StatusOr<v1::Job> ParseJob(absl::string_view bytes) {
  v1::Job job;
  if (!job.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("job store: unreadable job row");
  }
  return job;
}

// The meta value of `key`, or `fresh` stored as it if there was none: the
// same for every process that opens the store, whichever came first.
absl::StatusOr<std::string> MetaValue(PgConnection& db, const std::string& key, const std::string& fresh) {
  absl::StatusOr<PgResult> set =
      db.Run(PgQuery("INSERT INTO npuzzle_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING")
                 .Text(key)
                 .Text(fresh),
             "write meta");
  if (!set.ok()) return set.status();
  absl::StatusOr<PgResult> got =
      db.Run(PgQuery("SELECT value FROM npuzzle_meta WHERE key = $1").Text(key), "read meta");
  if (!got.ok()) return got.status();
  if (got->rows() != 1) return absl::InternalError("job store: meta value vanished");
  return std::string(got->Bytes(0, 0));
}

// What the active coordinator advertises ("" if nothing, or no tables yet).
std::string Advertised(PgConnection& db) {
  absl::StatusOr<PgResult> got =
      db.Run(PgQuery("SELECT value FROM npuzzle_meta WHERE key = $1").Text(kActiveKey), "read the active coordinator");
  return got.ok() && got->rows() == 1 ? std::string(got->Bytes(0, 0)) : "";
}

absl::Status CreateSchema(PgConnection& db) {
  if (absl::Status s = db.Begin(); !s.ok()) return s;
  absl::Status status =
      db.Run(PgQuery("SELECT pg_advisory_xact_lock($1)").Int(kSchemaLock), "lock the schema").status();
  for (const char* statement : kSchema) {
    if (status.ok()) status = db.Exec(statement, "create the tables");
  }
  absl::StatusOr<std::string> version = status.ok()
                                            ? MetaValue(db, "schema_version", std::to_string(kPostgresSchemaVersion))
                                            : absl::StatusOr<std::string>(status);
  if (!version.ok()) status = version.status();
  if (status.ok() && *version != std::to_string(kPostgresSchemaVersion)) {
    status = absl::FailedPreconditionError(absl::StrCat("job store: the database holds tables of version ", *version,
                                                        ", newer than this server's ", kPostgresSchemaVersion,
                                                        ": run a newer npuzzle-server"));
  }
  if (status.ok()) status = db.Commit();
  if (!status.ok()) db.Rollback();
  return status;
}

std::string RandomHex(int words) {
  absl::BitGen gen;
  std::string hex;
  for (int i = 0; i < words; ++i) absl::StrAppendFormat(&hex, "%016x", absl::Uniform<uint64_t>(gen));
  return hex;
}

// A text[] parameter, as text: each element quoted, with its quotes and
// backslashes escaped.
std::string TextArray(const std::vector<std::string>& elements) {
  std::string out = "{";
  for (const std::string& e : elements) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : e) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// An int[] parameter, as text.
std::string IntArray(const std::vector<v1::JobState>& states) {
  return absl::StrCat(
      "{",
      absl::StrJoin(states, ",", [](std::string* out, v1::JobState s) { absl::StrAppend(out, static_cast<int>(s)); }),
      "}");
}

}  // namespace

absl::Status PostgresJobStore::Lock(PgConnection& writer) {
  absl::StatusOr<PgResult> locked =
      writer.Run(PgQuery("SELECT pg_try_advisory_lock($1)").Int(kCoordinatorLock), "lock the store");
  if (!locked.ok()) return locked.status();
  if (locked->rows() != 1 || locked->Bytes(0, 0) != absl::string_view("\x01", 1)) {
    return absl::FailedPreconditionError(
        "job store: another coordinator has this PostgreSQL database (one serves a database at a time; with "
        "--standby a coordinator waits to take over when it goes)");
  }
  return absl::OkStatus();
}

absl::Status PostgresJobStore::StillLocked() {
  if (writer_->connects() == locked_on_connect_) return absl::OkStatus();
  if (absl::Status s = Lock(*writer_); !s.ok()) return s;
  locked_on_connect_ = writer_->connects();
  return absl::OkStatus();
}

absl::Status PostgresJobStore::Advertise(const std::string& addresses) {
  absl::MutexLock lock(&write_mu_);
  return writer_
      ->Run(PgQuery("INSERT INTO npuzzle_meta (key, value) VALUES ($1, $2) "
                    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value")
                .Text(kActiveKey)
                .Text(addresses),
            "advertise the active coordinator")
      .status();
}

absl::StatusOr<std::unique_ptr<PostgresJobStore>> PostgresJobStore::Open(const std::string& uri,
                                                                         absl::Duration lock_wait,
                                                                         const StandbyWait* standby) {
  const absl::Time give_up = standby != nullptr ? absl::InfiniteFuture() : absl::Now() + lock_wait;
  // A standby rides out the database's troubles as it waits; others fail.
  auto waiting = [&](const absl::Status& s) {
    return (absl::IsFailedPrecondition(s) || (standby != nullptr && absl::IsUnavailable(s))) && absl::Now() < give_up;
  };
  absl::StatusOr<std::unique_ptr<PgConnection>> writer;
  absl::Status locked;
  std::optional<std::string> active;  // what the active coordinator advertises, as last told
  // A database that restarts ends the active coordinator's session and
  // with it its lock. The active one takes the lock back at its next look
  // at the store (each second); a standby trying every 100 ms would win
  // the race and force a failover nobody needed, so after the database
  // was unreachable it waits this long before it tries again.
  absl::Time active_first_until = absl::InfinitePast();
  for (;;) {
    if (standby != nullptr && standby->stop->HasBeenNotified())
      return absl::CancelledError("stopped while standing by");
    if (!writer.ok()) writer = PgConnection::Connect(uri);
    if (!writer.ok()) {
      locked = writer.status();
    } else if (absl::Now() < active_first_until) {
      locked = absl::FailedPreconditionError("the database is back: leaving its lock to the active coordinator");
    } else {
      locked = Lock(**writer);
    }
    if (standby != nullptr && absl::IsUnavailable(locked)) active_first_until = absl::Now() + kActiveCoordinatorFirst;
    if (!waiting(locked)) break;
    if (standby == nullptr) {
      absl::SleepFor(absl::Milliseconds(100));
      continue;
    }
    if (!active) Log("job store: another coordinator has the database: standing by until it is free");
    const std::string now = writer.ok() ? Advertised(**writer) : "";
    if (now != active) standby->on_active(now);
    active = now;
    standby->stop->WaitForNotificationWithTimeout(absl::Milliseconds(100));
  }
  if (!locked.ok()) return locked;
  const bool waited = active.has_value();
  if (waited) Log("job store: the database is free: taking over");
  if (absl::Status s = CreateSchema(**writer); !s.ok()) return s;
  absl::StatusOr<std::string> secret = MetaValue(**writer, "secret", RandomHex(4));
  if (!secret.ok()) return secret.status();
  absl::StatusOr<std::unique_ptr<PgConnection>> reader = PgConnection::Connect(uri);
  if (!reader.ok()) return reader.status();
  absl::StatusOr<std::unique_ptr<PgConnection>> stats = PgConnection::Connect(uri);
  if (!stats.ok()) return stats.status();
  return std::unique_ptr<PostgresJobStore>(
      new PostgresJobStore(*std::move(writer), *std::move(reader), *std::move(stats), *std::move(secret)));
}

// A batch is one round trip: its statements go in one pipeline, which the
// server runs as one transaction. A taken id or request id cannot fail it
// (ON CONFLICT DO NOTHING: the change's own AlreadyExists), nor can an
// unknown id (no row updated: NotFound); anything else fails it whole.
std::vector<absl::Status> PostgresJobStore::Commit(const std::vector<Change>& changes) {
  absl::MutexLock lock(&write_mu_);
  absl::Status failed = writer_->Connected();
  if (failed.ok()) failed = StillLocked();
  absl::StatusOr<std::vector<PgResult>> results = absl::UnknownError("");
  if (failed.ok()) {
    std::vector<PgQuery> statements;
    statements.reserve(changes.size());
    for (const Change& change : changes) statements.push_back(Statement(change));
    results = writer_->RunInOneTransaction(statements, "commit");
    failed = results.status();
  }
  if (!failed.ok()) return std::vector<absl::Status>(changes.size(), failed);
  std::vector<absl::Status> outcomes;
  for (size_t i = 0; i < changes.size(); ++i) {
    const std::string& id = changes[i].job.id();
    const PgResult& r = (*results)[i];
    if (changes[i].seq > 0) {
      outcomes.push_back(r.Int(0, 0) == 1 ? absl::OkStatus()
                                          : absl::AlreadyExistsError(absl::StrCat("job store: job ", ShownId(id),
                                                                                  " or its request id is taken")));
    } else {
      outcomes.push_back(r.changed() == 1 ? absl::OkStatus()
                                          : absl::NotFoundError(absl::StrCat("job store: no job ", ShownId(id))));
    }
  }
  return outcomes;
}

// A new job (its label rows with it, if it was stored: one statement, its
// result the number of jobs stored), or a stored job's new row.
PgQuery PostgresJobStore::Statement(const Change& change) {
  const v1::Job& job = change.job;
  const DerivedColumns derived = DeriveColumns(job);
  if (change.seq > 0) {
    PgQuery insert(
        "WITH job AS (INSERT INTO jobs (seq, id, request_id, state, tenant, finished, expires, job) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING seq), "
        "labels AS (INSERT INTO job_labels (tenant, key, value, seq) "
        "SELECT $5, l.key, l.value, job.seq FROM job, unnest($9::text[], $10::text[]) AS l (key, value)) "
        "SELECT count(*)::bigint FROM job");
    insert.Int(change.seq).Text(job.id());
    if (job.spec().request_id().empty()) {
      insert.Null();
    } else {
      insert.Text(RequestKey(job.tenant(), job.spec().request_id()));
    }
    insert.Int(job.state()).Text(job.tenant()).IntOrNull(derived.finished).IntOrNull(derived.expires);
    insert.Blob(job.SerializeAsString());
    std::vector<std::string> keys, values;
    for (const auto& [key, value] : job.spec().labels()) {
      keys.push_back(key);
      values.push_back(value);
    }
    return insert.Text(TextArray(keys)).Text(TextArray(values));
  }
  return PgQuery("UPDATE jobs SET state = $1, job = $2, finished = $3, expires = $4 WHERE id = $5")
      .Int(job.state())
      .Blob(job.SerializeAsString())
      .IntOrNull(derived.finished)
      .IntOrNull(derived.expires)
      .Text(job.id());
}

absl::StatusOr<int64_t> PostgresJobStore::LastSeq() {
  absl::MutexLock lock(&read_mu_);
  absl::StatusOr<PgResult> r = reader_->Run(PgQuery("SELECT COALESCE(MAX(seq), 0)::bigint FROM jobs"), "last seq");
  if (!r.ok()) return r.status();
  return r->Int(0, 0);
}

absl::StatusOr<JobStore::Row> PostgresJobStore::FindRow(const PgQuery& query, absl::string_view missing) {
  absl::StatusOr<PgResult> r = reader_->Run(query, "find");
  if (!r.ok()) return r.status();
  if (r->rows() == 0) return absl::NotFoundError(missing);
  absl::StatusOr<v1::Job> job = ParseJob(r->Bytes(0, 0));
  if (!job.ok()) return job.status();
  return Row{*std::move(job), r->Int(0, 1)};
}

absl::StatusOr<v1::Job> PostgresJobStore::FindByRequestId(const std::string& tenant, const std::string& request_id) {
  absl::MutexLock lock(&read_mu_);
  absl::StatusOr<Row> row =
      FindRow(PgQuery("SELECT job, seq FROM jobs WHERE request_id = $1").Text(RequestKey(tenant, request_id)),
              "no job has this request id");
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::StatusOr<v1::Job> PostgresJobStore::Get(const std::string& id) {
  absl::MutexLock lock(&read_mu_);
  absl::StatusOr<Row> row =
      FindRow(PgQuery("SELECT job, seq FROM jobs WHERE id = $1").Text(id), NoSuchJob(id).message());
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::StatusOr<std::vector<JobStore::Row>> PostgresJobStore::Unfinished() {
  absl::MutexLock lock(&read_mu_);
  absl::StatusOr<PgResult> r =
      reader_->Run(PgQuery(absl::StrCat("SELECT job, seq FROM jobs WHERE state IN (", v1::JOB_STATE_QUEUED, ", ",
                                        v1::JOB_STATE_RUNNING, ") ORDER BY seq")),
                   "unfinished");
  if (!r.ok()) return r.status();
  std::vector<Row> rows;
  for (int i = 0; i < r->rows(); ++i) {
    absl::StatusOr<v1::Job> job = ParseJob(r->Bytes(i, 0));
    if (!job.ok()) return job.status();
    rows.push_back({*std::move(job), r->Int(i, 1)});
  }
  return rows;
}

// Candidates newest first, at most kMaxListScan of them (one more is asked
// for, to tell a walk that ended from one that was cut): the first label's
// rows, or the tenant's jobs. Jobs in other states come without their
// blob, as they are only counted past.
absl::StatusOr<JobStore::Page> PostgresJobStore::List(const std::string& tenant,
                                                      const std::vector<v1::JobState>& states,
                                                      const std::map<std::string, std::string>& labels, int page_size,
                                                      int64_t before) {
  absl::MutexLock lock(&read_mu_);
  const int64_t below = before > 0 ? before : INT64_MAX;
  const int64_t walk = labels.empty() && states.empty() ? page_size + 1 : kMaxListScan + 1;
  PgQuery query("");
  if (labels.empty()) {
    query = PgQuery(
                "SELECT seq, CASE WHEN cardinality($3::int[]) = 0 OR state = ANY($3::int[]) THEN job END FROM jobs "
                "WHERE tenant = $1 AND seq < $2 ORDER BY seq DESC LIMIT $4")
                .Text(tenant)
                .Int(below)
                .Text(IntArray(states))
                .Int(walk);
  } else {
    query = PgQuery(
                "SELECT l.seq, j.job FROM job_labels l JOIN jobs j ON j.seq = l.seq "
                "WHERE l.tenant = $1 AND l.key = $2 AND l.value = $3 AND l.seq < $4 ORDER BY l.seq DESC LIMIT $5")
                .Text(tenant)
                .Text(labels.begin()->first)
                .Text(labels.begin()->second)
                .Int(below)
                .Int(walk);
  }
  absl::StatusOr<PgResult> r = reader_->Run(query, "list");
  if (!r.ok()) return r.status();
  ListPage page(page_size, states, labels);
  const int scanned = std::min<int>(r->rows(), static_cast<int>(walk) - 1);
  for (int i = 0; i < scanned; ++i) {
    std::optional<v1::Job> job;
    if (!r->IsNull(i, 1)) {
      absl::StatusOr<v1::Job> parsed = ParseJob(r->Bytes(i, 1));
      if (!parsed.ok()) return parsed.status();
      job = *std::move(parsed);
    }
    if (!page.Add(r->Int(i, 0), job ? &*job : nullptr)) return std::move(page).Finish(/*walked_to_end=*/false);
  }
  return std::move(page).Finish(/*walked_to_end=*/r->rows() < walk);
}

absl::StatusOr<std::map<v1::JobState, int64_t>> PostgresJobStore::CountByState() {
  absl::MutexLock lock(&stats_mu_);
  absl::StatusOr<PgResult> r = stats_->Run(PgQuery("SELECT state, COUNT(*)::bigint FROM jobs GROUP BY state"), "count");
  if (!r.ok()) return r.status();
  std::map<v1::JobState, int64_t> counts;
  for (int i = 0; i < r->rows(); ++i) counts[static_cast<v1::JobState>(r->Int(i, 0))] = r->Int(i, 1);
  return counts;
}

absl::Status PostgresJobStore::CheckWritable(absl::Duration wait) {
  absl::MutexLock lock(&write_mu_);
  absl::Status status = writer_->Begin();
  if (status.ok()) status = StillLocked();
  if (status.ok()) {
    status = writer_->Exec(
        absl::StrCat("SET LOCAL statement_timeout = ", std::max<int64_t>(1, absl::ToInt64Milliseconds(wait))),
        "set a deadline");
  }
  if (status.ok()) status = writer_->Exec("UPDATE npuzzle_meta SET value = value WHERE key = 'secret'", "write");
  if (status.ok()) status = writer_->Commit();
  if (!status.ok()) writer_->Rollback();
  return status;
}

absl::StatusOr<int> PostgresJobStore::PurgeFinished(absl::Time now, absl::Duration retain, int limit) {
  absl::MutexLock lock(&write_mu_);
  absl::StatusOr<PgResult> r =
      writer_->Run(PgQuery("DELETE FROM jobs WHERE seq IN (SELECT seq FROM jobs WHERE expires < $1 "
                           "UNION SELECT seq FROM jobs WHERE finished < $2 LIMIT $3)")
                       .Int(absl::ToUnixSeconds(now))
                       .Int(retain > absl::ZeroDuration() ? absl::ToUnixSeconds(now - retain) : INT64_MIN)
                       .Int(limit),
                   "purge");
  if (!r.ok()) return r.status();
  return static_cast<int>(r->changed());
}

absl::StatusOr<JobStore::Usage> PostgresJobStore::DiskUsage() {
  absl::MutexLock lock(&stats_mu_);
  absl::StatusOr<PgResult> r = stats_->Run(
      PgQuery("SELECT (pg_total_relation_size('jobs') + pg_total_relation_size('job_labels'))::bigint"), "disk usage");
  if (!r.ok()) return r.status();
  return Usage{.bytes = r->Int(0, 0), .free_bytes = 0};
}

absl::Status PostgresJobStore::DeleteFinished(const std::string& id) {
  absl::MutexLock lock(&write_mu_);
  absl::StatusOr<PgResult> erased = writer_->Run(
      PgQuery(absl::StrCat("DELETE FROM jobs WHERE id = $1 AND state IN ", kFinishedStates)).Text(id), "delete");
  if (!erased.ok()) return erased.status();
  if (erased->changed() == 1) return absl::OkStatus();
  absl::StatusOr<PgResult> found = writer_->Run(PgQuery("SELECT 1 FROM jobs WHERE id = $1").Text(id), "find");
  if (!found.ok()) return found.status();
  if (found->rows() == 1) {
    return absl::FailedPreconditionError(absl::StrCat("job ", ShownId(id), " has not finished: cancel it first"));
  }
  return NoSuchJob(id);
}

}  // namespace npuzzle
