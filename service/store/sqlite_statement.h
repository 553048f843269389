// The small pieces every SQLite file of the store uses: a prepared
// statement that cleans up after itself, and the mapping of SQLite's
// errors onto absl::Status that callers and operators act on.
#ifndef NPUZZLE_SERVICE_STORE_SQLITE_STATEMENT_H_
#define NPUZZLE_SERVICE_STORE_SQLITE_STATEMENT_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

// Every SQLite failure reaches the caller as an error: never as "no rows"
// or NOT_FOUND. A damaged file is DATA_LOSS, so callers and operators can
// tell it from a passing fault; a full disk or an I/O error may pass, so it
// is UNAVAILABLE, which clients may retry.
absl::Status SqliteError(sqlite3* db, absl::string_view what);

// What ended a row loop: nothing if the rows simply ran out.
absl::Status EndOfRows(sqlite3* db, int rc, absl::string_view what);

// Runs statements that return no rows, one after another.
absl::Status Exec(sqlite3* db, const char* sql);

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
  // Binds `v`, or NULL when it is 0.
  void BindOrNull(int i, int64_t v) {
    if (v == 0) {
      BindNull(i);
    } else {
      Bind(i, v);
    }
  }
  int Step() { return sqlite3_step(stmt_); }
  // Steps a statement that returns no rows.
  bool Run() { return ok() && Step() == SQLITE_DONE; }
  // Starts over with the same bindings.
  void Reset() { sqlite3_reset(stmt_); }
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

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_SQLITE_STATEMENT_H_
