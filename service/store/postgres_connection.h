// PgConnection: one libpq connection, used by one thread at a time (its
// owner's lock), with the little the job store needs: statements with
// parameters, results read in binary, errors as absl::Status, and a broken
// connection opened again on the next use. Connection failures are
// Unavailable, so clients hear "try again", not "internal error".
#ifndef NPUZZLE_SERVICE_STORE_POSTGRES_CONNECTION_H_
#define NPUZZLE_SERVICE_STORE_POSTGRES_CONNECTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct pg_conn;
struct pg_result;

namespace npuzzle {

// A statement and its parameters ($1, $2, ... in order). Numbers and text
// go as text; a blob goes as binary, for a bytea column.
class PgQuery {
 public:
  explicit PgQuery(std::string sql) : sql_(std::move(sql)) {}
  PgQuery& Text(std::string value);
  PgQuery& Int(int64_t value) { return Text(std::to_string(value)); }
  PgQuery& Null();
  PgQuery& IntOrNull(int64_t value) { return value == 0 ? Null() : Int(value); }
  PgQuery& Blob(std::string bytes);

  const std::string& sql() const { return sql_; }
  const std::vector<std::optional<std::string>>& values() const { return values_; }
  const std::vector<int>& formats() const { return formats_; }

 private:
  std::string sql_;
  std::vector<std::optional<std::string>> values_;
  std::vector<int> formats_;
};

// A statement's rows, in binary: integers as PostgreSQL sends them
// (big-endian, 2, 4 or 8 bytes), text and bytea as their bytes.
class PgResult {
 public:
  explicit PgResult(pg_result* result);
  ~PgResult();
  PgResult(PgResult&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
  PgResult& operator=(PgResult&& other) noexcept {
    std::swap(result_, other.result_);
    return *this;
  }
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;

  int rows() const;
  // Rows a command changed (INSERT, UPDATE, DELETE).
  int64_t changed() const;
  bool IsNull(int row, int col) const;
  int64_t Int(int row, int col) const;
  absl::string_view Bytes(int row, int col) const;

 private:
  pg_result* result_;
};

class PgConnection {
 public:
  // Connects to `uri` (a libpq connection string or URI); the error names
  // the database's own complaint.
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(const std::string& uri);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs `query`; `what` names it in errors. A connection found broken is
  // opened again first, outside a transaction; inside one (which broke
  // with it) the statement fails Unavailable, and so does a failed reopen.
  absl::StatusOr<PgResult> Run(const PgQuery& query, absl::string_view what);
  // Runs `queries` as one transaction in one round trip (libpq's pipeline
  // mode, its statements between two Syncs: the server commits them
  // together or, if any fails, none of them). Their results in order, or
  // the first failure. The connection must be open (Connected).
  absl::StatusOr<std::vector<PgResult>> RunInOneTransaction(const std::vector<PgQuery>& queries,
                                                            absl::string_view what);
  // Opens a broken connection again (outside a transaction); Unavailable
  // if it cannot.
  absl::Status Connected();
  // Runs a statement without parameters or rows.
  absl::Status Exec(const std::string& sql, absl::string_view what);
  // A transaction: Begin, statements, then Commit, or Rollback if anything
  // failed (harmless when nothing is open).
  absl::Status Begin();
  absl::Status Commit();
  void Rollback();

  // How many times the connection was opened: what a session held (an
  // advisory lock) is gone once this changes.
  int64_t connects() const { return connects_; }

 private:
  explicit PgConnection(pg_conn* conn) : conn_(conn) {}
  absl::Status Reconnect();
  absl::StatusOr<PgResult> RunOnce(const PgQuery& query, absl::string_view what);
  // `result` if it succeeded; else its error, cleared, noting a broken
  // connection.
  absl::StatusOr<PgResult> Checked(pg_result* result, absl::string_view what);

  pg_conn* conn_;
  int64_t connects_ = 1;
  bool in_transaction_ = false;
  bool broken_ = false;  // the last statement found the connection gone
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_POSTGRES_CONNECTION_H_
