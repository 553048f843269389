#include "tests/util/soak_jobs.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/goals.h"
#include "engine/instances.h"
#include "engine/moves.h"
#include "engine/puzzle.h"
#include "engine/solver.h"
#include "gtest/gtest.h"
#include "jobspec/job_spec.h"
#include "tests/util/exhaustive.h"
#include "tests/util/service_harness.h"

namespace npuzzle::testing {

int SoakSetting(const char* name, int fallback) {
  int value;
  const char* text = std::getenv(name);
  return text != nullptr && absl::SimpleAtoi(text, &value) ? value : fallback;
}

std::vector<ExpectedJob> MakeSoakJobs(int count, int four_by_four_every, std::mt19937_64& rng) {
  const Board goal3 = *GoalPreset("standard", 3, 3);
  const Board goal4 = *GoalPreset("standard", 4, 4);
  const ExhaustiveDistances oracle(goal3);
  std::vector<ExpectedJob> jobs;
  for (int i = 0; i < count; ++i) {
    ExpectedJob e;
    e.request_id = absl::StrCat("soak-", i);
    if (i % four_by_four_every != four_by_four_every - 1) {
      const Board start = RandomSolvableBoard(goal3, rng);
      e.spec = SpecFor(start.ToString(), "standard", i % 2 == 0 ? "astar" : "idastar");
      e.length = oracle.Distance(start);
    } else {
      const Board start = RandomWalk(goal4, 40 + static_cast<int>(rng() % 20), rng);
      e.spec = SpecFor(start.ToString(), "standard", "idastar");
      absl::StatusOr<SolveResult> local = Solve({start, goal4, "idastar", "linear-conflict"});
      EXPECT_TRUE(local.ok());
      e.length = static_cast<int>(local->moves.size());
    }
    e.spec.set_request_id(e.request_id);
    jobs.push_back(std::move(e));
  }
  return jobs;
}

void ExpectSolvedAsExpected(const v1::Job& job, const ExpectedJob& expected) {
  SCOPED_TRACE(absl::StrCat(expected.request_id, " = ", job.id()));
  ASSERT_EQ(job.state(), v1::JOB_STATE_DONE) << job.ShortDebugString();
  EXPECT_EQ(job.result().status(), "solved");
  EXPECT_EQ(job.result().length(), expected.length);
  const Board start = *BoardFromProto(job.start());
  absl::StatusOr<std::vector<Dir>> moves = ParseMoves(job.result().moves());
  ASSERT_TRUE(moves.ok());
  EXPECT_EQ(*ApplyMoves(start, *moves), *BoardFromProto(job.goal()));
}

}  // namespace npuzzle::testing
