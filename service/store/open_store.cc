#include "service/store/open_store.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "service/store/postgres_job_store.h"
#include "service/store/sqlite_job_store.h"

namespace npuzzle {

absl::StatusOr<std::unique_ptr<JobStore>> OpenJobStore(const std::string& store, const std::string& sqlite_path,
                                                       bool full_sync, const StandbyWait* standby) {
  if (store.empty()) {
    absl::StatusOr<std::unique_ptr<SqliteJobStore>> sqlite = SqliteJobStore::Open(sqlite_path, full_sync);
    if (!sqlite.ok()) return sqlite.status();
    return std::unique_ptr<JobStore>(*std::move(sqlite));
  }
  if (!absl::StartsWith(store, "postgres://") && !absl::StartsWith(store, "postgresql://")) {
    return absl::InvalidArgumentError(absl::StrCat("--store '", ShownStore(store),
                                                   "' is not a PostgreSQL URI (postgres://USER@HOST/DATABASE); leave "
                                                   "it empty to keep jobs in --data-dir"));
  }
  absl::StatusOr<std::unique_ptr<PostgresJobStore>> postgres =
      PostgresJobStore::Open(store, absl::Seconds(10), standby);
  if (!postgres.ok()) return postgres.status();
  return std::unique_ptr<JobStore>(*std::move(postgres));
}

std::string ShownStore(const std::string& store) {
  std::string shown = store;
  // A password given as a parameter: ...?password=SECRET&...
  for (size_t at = shown.find("password="); at != std::string::npos; at = shown.find("password=", at + 1)) {
    const size_t value = at + 9;
    shown.replace(
        value, shown.find('&', value) == std::string::npos ? std::string::npos : shown.find('&', value) - value, "***");
  }
  // postgres://user:password@host/...: what lies between the user's colon
  // and the @ (before any / of the path).
  const size_t scheme = shown.find("://");
  if (scheme == std::string::npos) return shown;
  const size_t authority = scheme + 3;
  const size_t at = shown.find('@', authority);
  const size_t slash = shown.find('/', authority);
  if (at == std::string::npos || (slash != std::string::npos && slash < at)) return shown;
  const size_t colon = shown.find(':', authority);
  if (colon == std::string::npos || colon > at) return shown;
  return absl::StrCat(shown.substr(0, colon + 1), "***", shown.substr(at));
}

}  // namespace npuzzle
