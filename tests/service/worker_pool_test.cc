// Workers and their leases on their own: who is freest, which leases a
// worker holds and gives back, counts by tenant, silence and draining.
#include "service/workers/worker_pool.h"

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

class NullLink : public WorkerLink {
 public:
  void Send(const v1::CoordinatorMessage&) override {}
  void Close(const std::string&) override {}
};

TEST(WorkerPool, TheFreestWorkerTakesWorkAndEquallyFreeOnesTakeTurns) {
  WorkerPool pool;
  const absl::Time now = absl::Now();
  pool.Add(std::make_shared<NullLink>(), "small", 1, now);
  pool.Add(std::make_shared<NullLink>(), "big", 3, now);
  // Found again after both are in: the pool may move a worker as it grows.
  Worker& small = *pool.FindById("small");
  Worker& big = *pool.FindById("big");
  EXPECT_EQ(pool.Freest(), &big);
  pool.Assign(big, {"j1"}, "t");
  pool.Assign(big, {"j2"}, "t");
  // One free slot each: the one that has waited longer with it goes first.
  EXPECT_EQ(pool.Freest(), &small);
  pool.Assign(small, {"j3"}, "t");
  EXPECT_EQ(pool.Freest(), &big);
  pool.Assign(big, {"j4", 7}, "u");
  EXPECT_EQ(pool.Freest(), nullptr);
  EXPECT_EQ(pool.free_slots(), 0);
  EXPECT_EQ(pool.running(), 4);
}

TEST(WorkerPool, LeasesAreCountedByTenantAndEndWithTheirWorker) {
  WorkerPool pool;
  auto link = std::make_shared<NullLink>();
  Worker& w = pool.Add(link, "w", 4, absl::Now());
  pool.Assign(w, {"job"}, "alpha");
  pool.Assign(w, {"split", 1}, "beta");
  pool.Assign(w, {"split", 2}, "beta");
  pool.Assign(w, {"split", 2}, "beta");  // the same lease twice is one
  EXPECT_EQ(pool.LeasesOf("alpha"), 1);
  EXPECT_EQ(pool.LeasesOf("beta"), 2);
  EXPECT_TRUE(pool.Release(w, {"split", 1}));
  EXPECT_FALSE(pool.Release(w, {"split", 1}));
  EXPECT_FALSE(pool.Release(w, {"split"})) << "the job and its unit are different leases";
  const std::set<LeaseKey> held = pool.Remove(link.get());
  EXPECT_EQ(held, (std::set<LeaseKey>{{"job"}, {"split", 2}}));
  EXPECT_EQ(pool.LeasesOf("beta"), 0);
  EXPECT_EQ(pool.running(), 0);
  EXPECT_EQ(pool.FindById("w"), nullptr);
}

TEST(WorkerPool, DrainingWorkersTakeNothingAndSilentOnesAreFound) {
  WorkerPool pool;
  const absl::Time then = absl::Now();
  auto quiet = std::make_shared<NullLink>();
  pool.Add(quiet, "quiet", 2, then);
  pool.Add(std::make_shared<NullLink>(), "draining", 2, then);
  Worker& q = *pool.FindById("quiet");
  Worker& d = *pool.FindById("draining");
  pool.SetDraining(d, true);
  EXPECT_EQ(pool.Freest(), &q);
  pool.Heard(d, then + absl::Seconds(5));
  EXPECT_EQ(pool.SilentSince(then + absl::Seconds(1)), std::vector<WorkerLink*>{quiet.get()});
}

}  // namespace
}  // namespace npuzzle
