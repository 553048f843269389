// Jobs for the soak tests, each with the length its answer must have:
// 3x3 boards measured by exhaustive BFS, and 4x4 scrambles long enough to
// be running when a process is killed, measured by a local IDA* with
// another heuristic than the service's. Each carries a request id, so a
// submission retried after a failure names the same job.
#ifndef NPUZZLE_TESTS_UTIL_SOAK_JOBS_H_
#define NPUZZLE_TESTS_UTIL_SOAK_JOBS_H_

#include <random>
#include <string>
#include <vector>

#include "npuzzle/v1/solver.pb.h"

namespace npuzzle::testing {

struct ExpectedJob {
  std::string request_id;
  v1::JobSpec spec;
  int length = 0;
  std::string job_id;  // once acknowledged
};

// A soak's setting from the environment variable `name`, else `fallback`.
int SoakSetting(const char* name, int fallback);

// `count` jobs, every `four_by_four_every`-th a 4x4 scramble.
std::vector<ExpectedJob> MakeSoakJobs(int count, int four_by_four_every, std::mt19937_64& rng);

// Checks that a finished job is solved at the expected length and that
// its moves replay from its start to its goal.
void ExpectSolvedAsExpected(const v1::Job& job, const ExpectedJob& expected);

}  // namespace npuzzle::testing

#endif  // NPUZZLE_TESTS_UTIL_SOAK_JOBS_H_
