// Helpers for tests that run the engine: solve and check the answer replays.
#ifndef NPUZZLE_TESTS_UTIL_SOLVE_UTIL_H_
#define NPUZZLE_TESTS_UTIL_SOLVE_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/solver.h"
#include "gtest/gtest.h"

namespace npuzzle::testing {

// Solves and, when solved, checks that the moves and tile list replay from
// start to goal. Fails the test on an error status.
SolveResult SolveAndReplay(const Board& start, const Board& goal, const std::string& algorithm,
                           const std::string& heuristic, SearchOptions options = {});

// Checks that `moves` (the blank's, "UDLR...") replay from `start` to
// `goal` and that `length` counts them; `context` names the case.
void ExpectReplays(const Board& start, const Board& goal, absl::string_view moves, int64_t length,
                   absl::string_view context = "");

// The line of a data file split into fields at '|', trimmed.
std::vector<std::string> SplitFields(const std::string& line);

// Path of a file under tests/data.
std::string DataPath(const std::string& name);

}  // namespace npuzzle::testing

#endif  // NPUZZLE_TESTS_UTIL_SOLVE_UTIL_H_
