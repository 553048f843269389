// A fixture for tests every job store must pass: each runs once against
// SQLite in a temporary directory and once against a PostgreSQL cluster of
// its own (tests/util/postgres_harness.h), so the two stores answer alike.
#ifndef NPUZZLE_TESTS_SERVICE_EACH_STORE_H_
#define NPUZZLE_TESTS_SERVICE_EACH_STORE_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "service/store/postgres_job_store.h"
#include "service/store/sqlite_job_store.h"
#include "tests/util/postgres_harness.h"
#include "tests/util/process_util.h"

namespace npuzzle::testing {

class EachStore : public ::testing::TestWithParam<std::string> {
 protected:
  bool postgres() const { return GetParam() == "postgres"; }

  // Opens the test's store (again, as a restarted coordinator would: close
  // the one opened before first).
  std::unique_ptr<JobStore> OpenStore() {
    if (!postgres()) {
      absl::StatusOr<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(dir_.path() + "/jobs.db");
      EXPECT_TRUE(store.ok()) << store.status();
      return store.ok() ? *std::move(store) : nullptr;
    }
    if (pg_ == nullptr) pg_ = std::make_unique<Postgres>();
    EXPECT_TRUE(pg_->ok()) << pg_->status();
    absl::StatusOr<std::unique_ptr<PostgresJobStore>> store = PostgresJobStore::Open(pg_->uri());
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  // The PostgreSQL cluster, once a store has been opened on it.
  Postgres& pg() { return *pg_; }

  TempDir dir_;
  std::unique_ptr<Postgres> pg_;
};

inline std::string StoreName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

}  // namespace npuzzle::testing

// Runs the EachStore-derived `suite` against both stores.
#define NPUZZLE_FOR_EACH_STORE(suite) \
  INSTANTIATE_TEST_SUITE_P(, suite, ::testing::Values("sqlite", "postgres"), ::npuzzle::testing::StoreName)

#endif  // NPUZZLE_TESTS_SERVICE_EACH_STORE_H_
