#include "service/store/sqlite_statement.h"

#include "absl/strings/str_cat.h"

namespace npuzzle {

absl::Status SqliteError(sqlite3* db, absl::string_view what) {
  const int code = sqlite3_errcode(db);
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
    return absl::DataLossError(absl::StrCat("job store: ", what, ": the file is damaged (", sqlite3_errmsg(db), ")"));
  }
  if ((code & 0xff) == SQLITE_FULL || (code & 0xff) == SQLITE_IOERR) {
    return absl::UnavailableError(absl::StrCat("job store: ", what, ": ", sqlite3_errmsg(db)));
  }
  return absl::InternalError(absl::StrCat("job store: ", what, ": ", sqlite3_errmsg(db)));
}

absl::Status EndOfRows(sqlite3* db, int rc, absl::string_view what) {
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db, what);
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

}  // namespace npuzzle
