#include "service/store/postgres_connection.h"

#include <endian.h>
#include <libpq-fe.h>

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace npuzzle {
namespace {

constexpr const char* kSessionSettings = "SET client_min_messages TO warning";

// The database's message, on one line.
std::string Message(const char* text) {
  std::string m = text == nullptr ? "" : text;
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  for (char& c : m) {
    if (c == '\n') c = ' ';
  }
  return m;
}

// A failed statement's status, by its SQLSTATE: the connection's and the
// server's troubles (classes 08, 53, 57) are Unavailable, worth retrying;
// a deadline passed (57014, statement_timeout) is too.
absl::Status ResultError(pg_conn* conn, pg_result* result, absl::string_view what) {
  const char* state = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  const std::string message = absl::StrCat(
      "job store: ", what, ": ", Message(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn)));
  const std::string code = state == nullptr ? "" : state;
  if (PQstatus(conn) != CONNECTION_OK || code.empty() || absl::StartsWith(code, "08") || absl::StartsWith(code, "53") ||
      absl::StartsWith(code, "57")) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

}  // namespace

PgQuery& PgQuery::Text(std::string value) {
  values_.emplace_back(std::move(value));
  formats_.push_back(0);
  return *this;
}

PgQuery& PgQuery::Null() {
  values_.emplace_back(std::nullopt);
  formats_.push_back(0);
  return *this;
}

PgQuery& PgQuery::Blob(std::string bytes) {
  values_.emplace_back(std::move(bytes));
  formats_.push_back(1);
  return *this;
}

PgResult::PgResult(pg_result* result) : result_(result) {}
PgResult::~PgResult() { PQclear(result_); }

int PgResult::rows() const { return PQntuples(result_); }

int64_t PgResult::changed() const {
  int64_t n = 0;
  const char* text = PQcmdTuples(result_);
  for (; text != nullptr && *text >= '0' && *text <= '9'; ++text) n = n * 10 + (*text - '0');
  return n;
}

bool PgResult::IsNull(int row, int col) const { return PQgetisnull(result_, row, col) != 0; }

int64_t PgResult::Int(int row, int col) const {
  const char* v = PQgetvalue(result_, row, col);
  switch (PQgetlength(result_, row, col)) {
    case 8: {
      uint64_t x;
      std::memcpy(&x, v, sizeof x);
      return static_cast<int64_t>(be64toh(x));
    }
    case 4: {
      uint32_t x;
      std::memcpy(&x, v, sizeof x);
      return static_cast<int32_t>(be32toh(x));
    }
    case 2: {
      uint16_t x;
      std::memcpy(&x, v, sizeof x);
      return static_cast<int16_t>(be16toh(x));
    }
    default:
      return 0;
  }
}

absl::string_view PgResult::Bytes(int row, int col) const {
  return absl::string_view(PQgetvalue(result_, row, col), static_cast<size_t>(PQgetlength(result_, row, col)));
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& uri) {
  pg_conn* conn = PQconnectdb(uri.c_str());
  if (conn == nullptr) return absl::ResourceExhaustedError("job store: out of memory connecting to PostgreSQL");
  if (PQstatus(conn) != CONNECTION_OK) {
    absl::Status s = absl::UnavailableError(
        absl::StrCat("job store: cannot connect to PostgreSQL: ", Message(PQerrorMessage(conn))));
    PQfinish(conn);
    return s;
  }
  // The server's warnings (as it shuts down) go to the log, not to stderr
  // on their own; its notices ("already exists, skipping") nowhere.
  PQsetNoticeProcessor(
      conn, [](void*, const char* message) { Log(absl::StrCat("PostgreSQL: ", Message(message))); }, nullptr);
  auto connection = std::unique_ptr<PgConnection>(new PgConnection(conn));
  if (absl::Status s = connection->Exec(kSessionSettings, "configure the session"); !s.ok()) return s;
  return connection;
}

PgConnection::~PgConnection() { PQfinish(conn_); }

absl::Status PgConnection::Reconnect() {
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat("job store: PostgreSQL is unreachable: ", Message(PQerrorMessage(conn_))));
  }
  ++connects_;
  broken_ = false;
  return RunOnce(PgQuery(kSessionSettings), "configure the session").status();
}

absl::Status PgConnection::Connected() {
  if (!broken_ && PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
  if (in_transaction_) return absl::UnavailableError("job store: the connection to PostgreSQL broke");
  return Reconnect();
}

absl::StatusOr<PgResult> PgConnection::Run(const PgQuery& query, absl::string_view what) {
  if (absl::Status s = Connected(); !s.ok()) return s;
  absl::StatusOr<PgResult> result = RunOnce(query, what);
  // A connection the server dropped (a restart) is only found out by using
  // it: outside a transaction, once more on a new one.
  if (broken_ && !in_transaction_ && Reconnect().ok()) result = RunOnce(query, what);
  return result;
}

// libpq's arrays for a query's parameters, pointing into it.
struct Params {
  explicit Params(const PgQuery& query) : values(query.values().size()), lengths(query.values().size()) {
    for (size_t i = 0; i < values.size(); ++i) {
      const std::optional<std::string>& v = query.values()[i];
      values[i] = v ? v->data() : nullptr;
      lengths[i] = v ? static_cast<int>(v->size()) : 0;
    }
  }
  int count() const { return static_cast<int>(values.size()); }
  std::vector<const char*> values;
  std::vector<int> lengths;
};

absl::StatusOr<PgResult> PgConnection::RunOnce(const PgQuery& query, absl::string_view what) {
  const Params params(query);
  return Checked(PQexecParams(conn_, query.sql().c_str(), params.count(), nullptr, params.values.data(),
                              params.lengths.data(), query.formats().data(), /*resultFormat=binary*/ 1),
                 what);
}

absl::StatusOr<PgResult> PgConnection::Checked(pg_result* result, absl::string_view what) {
  const ExecStatusType status = result == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(result);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return PgResult(result);
  const char* state = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  broken_ = broken_ || PQstatus(conn_) != CONNECTION_OK || state == nullptr || absl::StartsWith(state, "08") ||
            absl::StartsWith(state, "57P");
  absl::Status error = ResultError(conn_, result, what);
  PQclear(result);
  return error;
}

absl::StatusOr<std::vector<PgResult>> PgConnection::RunInOneTransaction(const std::vector<PgQuery>& queries,
                                                                        absl::string_view what) {
  if (PQenterPipelineMode(conn_) != 1) {
    broken_ = true;
    return absl::UnavailableError(absl::StrCat("job store: ", what, ": ", Message(PQerrorMessage(conn_))));
  }
  bool sent = true;
  for (const PgQuery& query : queries) {
    const Params params(query);
    sent = sent && PQsendQueryParams(conn_, query.sql().c_str(), params.count(), nullptr, params.values.data(),
                                     params.lengths.data(), query.formats().data(), /*resultFormat=binary*/ 1) == 1;
  }
  sent = sent && PQpipelineSync(conn_) == 1;
  std::vector<PgResult> results;
  absl::Status failed =
      sent ? absl::OkStatus()
           : absl::UnavailableError(absl::StrCat("job store: ", what, ": ", Message(PQerrorMessage(conn_))));
  // Each statement's result and the null after it; then the Sync's, with
  // any error of the commit itself before it. After a failure the server
  // skips the rest (PGRES_PIPELINE_ABORTED) and rolls the whole back.
  for (size_t i = 0; sent && i < queries.size(); ++i) {
    pg_result* result = PQgetResult(conn_);
    if (result == nullptr) {
      failed.Update(absl::UnavailableError(absl::StrCat("job store: ", what, ": the connection to PostgreSQL broke")));
      broken_ = true;
      break;
    }
    if (PQresultStatus(result) == PGRES_PIPELINE_ABORTED) {
      PQclear(result);
    } else {
      absl::StatusOr<PgResult> checked = Checked(result, what);
      if (checked.ok()) {
        results.push_back(*std::move(checked));
      } else {
        failed.Update(checked.status());
      }
    }
    PQclear(PQgetResult(conn_));  // the null that ends this statement's results
  }
  while (sent && !broken_) {
    pg_result* result = PQgetResult(conn_);
    if (result == nullptr) break;
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_PIPELINE_SYNC) {
      PQclear(result);
      break;
    }
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      failed.Update(Checked(result, what).status());
    } else {
      PQclear(result);
    }
  }
  if (PQexitPipelineMode(conn_) != 1) broken_ = true;
  if (!failed.ok()) return failed;
  return results;
}

absl::Status PgConnection::Exec(const std::string& sql, absl::string_view what) {
  absl::StatusOr<PgResult> result = Run(PgQuery(sql), what);
  return result.status();
}

absl::Status PgConnection::Begin() {
  absl::Status s = Exec("BEGIN", "begin");
  in_transaction_ = s.ok();
  return s;
}

absl::Status PgConnection::Commit() {
  absl::Status s = Exec("COMMIT", "commit");
  in_transaction_ = false;
  return s;
}

void PgConnection::Rollback() {
  if (PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
    PQclear(PQexec(conn_, "ROLLBACK"));
  }
  in_transaction_ = false;
}

}  // namespace npuzzle
