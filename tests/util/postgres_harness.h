// A real PostgreSQL server for a test: Debian's binaries (initdb, pg_ctl)
// run a fresh cluster in a temporary directory, reached through a Unix
// socket there, so tests running side by side never meet. Tests keep the
// cluster in memory (/dev/shm): on this disk creating a cluster's thousand
// files and syncing them cost 1.3 s a test, in memory 0.35 s, and what
// the tests crash is the server process, not the machine, so a cluster in
// memory survives every crash they stage. A benchmark keeps it on disk,
// whose syncs are part of what it measures. PostgreSQL
// refuses to run as root, and CI runs as root: then the cluster belongs to
// `nobody`, and its commands run as that user.
#ifndef NPUZZLE_TESTS_UTIL_POSTGRES_HARNESS_H_
#define NPUZZLE_TESTS_UTIL_POSTGRES_HARNESS_H_

#include <string>

#include "absl/status/status.h"

namespace npuzzle::testing {

class Postgres {
 public:
  enum class Place { kMemory, kDisk };

  // Creates the cluster and starts the server; check ok() before use.
  explicit Postgres(Place place = Place::kMemory);
  // Stops the server at once and removes the cluster.
  ~Postgres();
  Postgres(const Postgres&) = delete;
  Postgres& operator=(const Postgres&) = delete;

  const absl::Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }

  // A libpq connection URI for the cluster's database `database`.
  std::string uri(const std::string& database = "npuzzle") const;
  // Runs SQL through psql as the superuser; its output.
  std::string Sql(const std::string& sql) const;

  // Stops the server (immediate: as a crash would) and starts it again.
  absl::Status Stop();
  absl::Status Start();

 private:
  // `command` run as the cluster's owner, through /bin/sh.
  std::string AsOwner(const std::string& command) const;

  std::string root_;  // the cluster's directory: data/ and the socket
  absl::Status status_;
};

}  // namespace npuzzle::testing

#endif  // NPUZZLE_TESTS_UTIL_POSTGRES_HARNESS_H_
