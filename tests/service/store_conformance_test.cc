// What every job store promises (service/store/job_store.h), asserted of
// SQLite and PostgreSQL alike: a batch's outcomes change by change, request
// ids per tenant, unfinished jobs in submission order, counts, retention
// and deletion, a secret that outlives a restart, and jobs that outlive
// one. PostgreSQL's own promises follow: one coordinator a database, and
// a database restart ridden out.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "service/store/open_store.h"
#include "tests/service/each_store.h"

namespace npuzzle {
namespace {

using testing::EachStore;

v1::Job JobIn(const std::string& id, v1::JobState state, const std::string& tenant = "",
              const std::string& request_id = "") {
  v1::Job job;
  job.set_id(id);
  job.set_state(state);
  job.set_tenant(tenant);
  job.mutable_spec()->set_request_id(request_id);
  return job;
}

// Finished `ago` before `now`, and kept `retain_seconds` by its own wish.
v1::Job Finished(const std::string& id, absl::Time now, absl::Duration ago, int64_t retain_seconds = 0) {
  v1::Job job = JobIn(id, v1::JOB_STATE_DONE);
  job.mutable_finish_time()->set_seconds(absl::ToUnixSeconds(now - ago));
  job.mutable_spec()->set_retain_seconds(retain_seconds);
  return job;
}

using StoreConformance = EachStore;

TEST_P(StoreConformance, EachChangeOfABatchHasItsOwnOutcome) {
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  v1::Job a = JobIn("a", v1::JOB_STATE_QUEUED);
  v1::Job running = a;
  running.set_state(v1::JOB_STATE_RUNNING);
  running.set_worker_id("w1");
  const std::vector<absl::Status> outcomes = store->Commit({
      {a, 1},
      {JobIn("a", v1::JOB_STATE_QUEUED), 2},    // its id is taken
      {JobIn("ghost", v1::JOB_STATE_DONE), 0},  // no such job to replace
      {running, 0},
      {JobIn("b", v1::JOB_STATE_QUEUED), 3},
  });
  ASSERT_EQ(outcomes.size(), 5u);
  EXPECT_TRUE(outcomes[0].ok()) << outcomes[0];
  EXPECT_TRUE(absl::IsAlreadyExists(outcomes[1])) << outcomes[1];
  EXPECT_TRUE(absl::IsNotFound(outcomes[2])) << outcomes[2];
  EXPECT_TRUE(outcomes[3].ok()) << outcomes[3];
  EXPECT_TRUE(outcomes[4].ok()) << outcomes[4];
  absl::StatusOr<v1::Job> got = store->Get("a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(got->worker_id(), "w1");
  EXPECT_TRUE(absl::IsNotFound(store->Get("ghost").status()));
  EXPECT_EQ(*store->LastSeq(), 3);
}

TEST_P(StoreConformance, RequestIdsBelongToTheirTenant) {
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::vector<absl::Status> outcomes = store->Commit({
      {JobIn("a", v1::JOB_STATE_QUEUED, "alice", "r1"), 1},
      {JobIn("b", v1::JOB_STATE_QUEUED, "bob", "r1"), 2},
      {JobIn("c", v1::JOB_STATE_QUEUED, "alice", "r1"), 3},
  });
  EXPECT_TRUE(outcomes[0].ok());
  EXPECT_TRUE(outcomes[1].ok()) << "another tenant's request id";
  EXPECT_TRUE(absl::IsAlreadyExists(outcomes[2])) << outcomes[2];
  EXPECT_EQ(store->FindByRequestId("alice", "r1")->id(), "a");
  EXPECT_EQ(store->FindByRequestId("bob", "r1")->id(), "b");
  EXPECT_TRUE(absl::IsNotFound(store->FindByRequestId("carol", "r1").status()));
}

TEST_P(StoreConformance, UnfinishedJobsComeInSubmissionOrderAndCountsByState) {
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (const absl::Status& s : store->Commit({{JobIn("q2", v1::JOB_STATE_QUEUED), 5},
                                              {JobIn("d", v1::JOB_STATE_DONE), 2},
                                              {JobIn("r", v1::JOB_STATE_RUNNING), 3},
                                              {JobIn("q1", v1::JOB_STATE_QUEUED), 1}})) {
    ASSERT_TRUE(s.ok()) << s;
  }
  absl::StatusOr<std::vector<JobStore::Row>> rows = store->Unfinished();
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::vector<std::pair<std::string, int64_t>> got;
  for (const JobStore::Row& row : *rows) got.emplace_back(row.job.id(), row.seq);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int64_t>>{{"q1", 1}, {"r", 3}, {"q2", 5}}));
  const std::map<v1::JobState, int64_t> counts = *store->CountByState();
  EXPECT_EQ(counts, (std::map<v1::JobState, int64_t>{
                        {v1::JOB_STATE_QUEUED, 2}, {v1::JOB_STATE_RUNNING, 1}, {v1::JOB_STATE_DONE, 1}}));
}

TEST_P(StoreConformance, RetentionAndDeletionTakeOnlyFinishedJobs) {
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const absl::Time now = absl::Now();
  for (const absl::Status& s : store->Commit({
           {Finished("old", now, absl::Hours(2)), 1},
           {Finished("recent", now, absl::Minutes(1)), 2},
           {Finished("asked-for-less", now, absl::Minutes(2), /*retain_seconds=*/60), 3},
           {JobIn("running", v1::JOB_STATE_RUNNING), 4},
           {Finished("to-delete", now, absl::Minutes(1)), 5},
       })) {
    ASSERT_TRUE(s.ok()) << s;
  }
  absl::StatusOr<int> purged = store->PurgeFinished(now, absl::Hours(1), 100);
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(*purged, 2);
  EXPECT_TRUE(absl::IsNotFound(store->Get("old").status()));
  EXPECT_TRUE(absl::IsNotFound(store->Get("asked-for-less").status()));
  EXPECT_TRUE(store->Get("recent").ok());
  EXPECT_EQ(*store->PurgeFinished(now, absl::Hours(1), 100), 0);

  EXPECT_TRUE(store->DeleteFinished("to-delete").ok());
  EXPECT_TRUE(absl::IsNotFound(store->Get("to-delete").status()));
  EXPECT_TRUE(absl::IsNotFound(store->DeleteFinished("to-delete")));
  EXPECT_TRUE(absl::IsFailedPrecondition(store->DeleteFinished("running")));
  EXPECT_TRUE(store->Get("running").ok());
  absl::StatusOr<JobStore::Usage> usage = store->DiskUsage();
  ASSERT_TRUE(usage.ok()) << usage.status();
  EXPECT_GT(usage->bytes, 0);
}

TEST_P(StoreConformance, JobsAndTheSecretOutliveARestart) {
  std::string secret;
  {
    std::unique_ptr<JobStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    secret = store->Secret();
    EXPECT_GE(secret.size(), 16u);
    for (const absl::Status& s : store->Commit({{JobIn("kept", v1::JOB_STATE_QUEUED, "t", "r"), 1}})) {
      ASSERT_TRUE(s.ok()) << s;
    }
    EXPECT_TRUE(store->CheckWritable(absl::Seconds(1)).ok());
  }
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Secret(), secret);
  EXPECT_EQ(store->Get("kept")->tenant(), "t");
  EXPECT_EQ(store->FindByRequestId("t", "r")->id(), "kept");
  EXPECT_EQ(*store->LastSeq(), 1);
}

TEST_P(StoreConformance, LabelsWithQuotesCommasAndBracesAreStoredAsGiven) {
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  v1::Job job = JobIn("odd", v1::JOB_STATE_QUEUED, "t");
  const std::map<std::string, std::string> labels = {{"k\"ey", "v,a\\l{u}e"}, {"plain", "NULL"}, {"empty", ""}};
  for (const auto& [k, v] : labels) (*job.mutable_spec()->mutable_labels())[k] = v;
  for (const absl::Status& s : store->Commit({{job, 1}})) ASSERT_TRUE(s.ok()) << s;
  for (const auto& [k, v] : labels) {
    absl::StatusOr<JobStore::Page> page = store->List("t", {}, {{k, v}}, 10, 0);
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_EQ(page->jobs.size(), 1u) << k;
    EXPECT_EQ(page->jobs[0].id(), "odd");
  }
  EXPECT_TRUE(store->List("t", {}, {{"plain", "null"}}, 10, 0)->jobs.empty());
}

NPUZZLE_FOR_EACH_STORE(StoreConformance);

// PostgreSQL's own promises.

class PostgresStore : public EachStore {};

// The job manager keeps the queue and the leases in memory, so a second
// coordinator on the same database would run every job twice: it is
// refused while the first has the database, and let in once it is gone.
TEST_P(PostgresStore, ASecondCoordinatorIsRefusedWhileTheFirstHasTheDatabase) {
  std::unique_ptr<JobStore> first = OpenStore();
  ASSERT_NE(first, nullptr);
  absl::StatusOr<std::unique_ptr<PostgresJobStore>> second = PostgresJobStore::Open(pg().uri(), absl::Seconds(1));
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  EXPECT_NE(second.status().message().find("another coordinator"), std::string::npos) << second.status();
  first.reset();
  EXPECT_TRUE(PostgresJobStore::Open(pg().uri()).ok());
}

// A batch goes in one round trip, and whole or not at all: a change the
// database refuses (text with a NUL byte) fails every change with it.
TEST_P(PostgresStore, ABatchTheDatabaseRefusesStoresNothing) {
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  v1::Job bad = JobIn("bad", v1::JOB_STATE_QUEUED);
  (*bad.mutable_spec()->mutable_labels())["k"] = std::string("a\0b", 3);
  const std::vector<absl::Status> outcomes = store->Commit({{JobIn("good", v1::JOB_STATE_QUEUED), 1}, {bad, 2}});
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_FALSE(outcomes[0].ok());
  EXPECT_EQ(outcomes[0], outcomes[1]);
  EXPECT_TRUE(absl::IsNotFound(store->Get("good").status()));
  // And the connection is fine for the next batch.
  for (const absl::Status& s : store->Commit({{JobIn("good", v1::JOB_STATE_QUEUED), 1}})) EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(store->Get("good").ok());
}

// While the database is down, calls fail Unavailable (so clients hear
// "retry"); once it is back the store reconnects by itself, and what was
// committed before is all there.
TEST_P(PostgresStore, ADatabaseRestartIsRiddenOut) {
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (const absl::Status& s : store->Commit({{JobIn("before", v1::JOB_STATE_QUEUED), 1}})) ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(pg().Stop().ok());
  const std::vector<absl::Status> down = store->Commit({{JobIn("during", v1::JOB_STATE_QUEUED), 2}});
  EXPECT_TRUE(absl::IsUnavailable(down[0])) << down[0];
  EXPECT_TRUE(absl::IsUnavailable(store->Get("before").status()));
  EXPECT_TRUE(absl::IsUnavailable(store->CheckWritable(absl::Milliseconds(100))));
  ASSERT_TRUE(pg().Start().ok());
  const std::vector<absl::Status> up = store->Commit({{JobIn("after", v1::JOB_STATE_QUEUED), 3}});
  EXPECT_TRUE(up[0].ok()) << up[0];
  EXPECT_TRUE(store->Get("before").ok());
  EXPECT_TRUE(absl::IsNotFound(store->Get("during").status()));
  EXPECT_TRUE(store->Get("after").ok());
  EXPECT_TRUE(store->CheckWritable(absl::Seconds(1)).ok());
  // Its lock came back with its connection: a second coordinator is still refused.
  EXPECT_FALSE(PostgresJobStore::Open(pg().uri(), absl::Seconds(1)).ok());
}

INSTANTIATE_TEST_SUITE_P(, PostgresStore, ::testing::Values("postgres"), testing::StoreName);

TEST(OpenStore, AStoreThatIsNotPostgresIsRefusedAndNoPasswordIsShown) {
  absl::StatusOr<std::unique_ptr<JobStore>> store =
      OpenJobStore("mysql://admin:hunter2@db/npuzzle", "/nonexistent/jobs.db", true);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(store.status())) << store.status();
  EXPECT_NE(store.status().message().find("not a PostgreSQL URI"), std::string::npos) << store.status();
  EXPECT_EQ(store.status().message().find("hunter2"), std::string::npos) << store.status();
  EXPECT_EQ(ShownStore("postgres://npuzzle:hunter2@db:5432/jobs?sslmode=require"),
            "postgres://npuzzle:***@db:5432/jobs?sslmode=require");
  EXPECT_EQ(ShownStore("postgresql:///npuzzle?host=/run/pg"), "postgresql:///npuzzle?host=/run/pg");
  EXPECT_EQ(ShownStore("postgres://npuzzle@db/jobs"), "postgres://npuzzle@db/jobs");
  EXPECT_EQ(ShownStore("postgres://db/jobs?user=n&password=hunter2&sslmode=require"),
            "postgres://db/jobs?user=n&password=***&sslmode=require");
  EXPECT_EQ(ShownStore("postgres://db/jobs?password=hunter2"), "postgres://db/jobs?password=***");
}

}  // namespace
}  // namespace npuzzle
