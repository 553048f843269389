// The cases from the source documents: A* and IDA* reach the verified
// optimal lengths, including the two 31-move 3x3 boards.
#include <fstream>

#include "engine/board_parser.h"
#include "gtest/gtest.h"
#include "tests/util/solve_util.h"

namespace npuzzle {
namespace {

struct SeedCase {
  Board start, goal;
  int length;
};

std::vector<SeedCase> LoadSeedCases() {
  std::ifstream in(testing::DataPath("seed-cases.txt"));
  std::vector<SeedCase> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = testing::SplitFields(line);
    const int rows = std::stoi(f[0].substr(0, f[0].find(' ')));
    const int cols = std::stoi(f[0].substr(f[0].find(' ') + 1));
    cases.push_back({*ParseBoard(f[1], rows, cols), *ParseBoard(f[2], rows, cols), std::stoi(f[3])});
  }
  return cases;
}

TEST(SeedCases, AStarAndIdaStarFindTheListedOptimalLengths) {
  const std::vector<SeedCase> cases = LoadSeedCases();
  ASSERT_EQ(cases.size(), 11u);
  for (const SeedCase& c : cases) {
    for (const char* algorithm : {"astar", "idastar"}) {
      for (const char* heuristic : {"misplaced", "manhattan", "linear-conflict", "reversal"}) {
        const SolveResult r = testing::SolveAndReplay(c.start, c.goal, algorithm, heuristic);
        EXPECT_EQ(r.status, SearchStatus::kSolved);
        EXPECT_TRUE(r.optimal);
        EXPECT_EQ(static_cast<int>(r.moves.size()), c.length)
            << algorithm << "/" << heuristic << " on " << c.start.ToString();
      }
    }
  }
}

TEST(SeedCases, KunkleExampleIsDRUULD) {
  // With an informed search the six-move answer is unique.
  const SolveResult r =
      testing::SolveAndReplay(*ParseBoard("134 8b5 726"), *ParseBoard("123 8b4 765"), "astar", "manhattan");
  EXPECT_EQ(MovesToString(r.moves), "DRUULD");
}

}  // namespace
}  // namespace npuzzle
