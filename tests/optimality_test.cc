// Every algorithm that promises shortest answers returns exactly the
// exhaustive-BFS distance on random small boards with random goals; the
// others return answers that replay and are no shorter than optimal.
#include <random>

#include "engine/instances.h"
#include "engine/registry.h"
#include "gtest/gtest.h"
#include "tests/exhaustive.h"
#include "tests/solve_util.h"

namespace npuzzle {
namespace {

using testing::ExhaustiveDistances;
using testing::SolveAndReplay;

struct Shape {
  int rows, cols, goals, boards_per_goal;
  int blind_boards_per_goal;  // how many of them the uninformed searches get

  friend void PrintTo(const Shape& s, std::ostream* os) { *os << s.rows << "x" << s.cols; }
};

class OptimalityTest : public ::testing::TestWithParam<Shape> {};

TEST_P(OptimalityTest, OptimalAlgorithmsMatchBfsDistances) {
  const Shape shape = GetParam();
  std::mt19937_64 rng(shape.rows * 100 + shape.cols);
  int checked = 0;
  for (int g = 0; g < shape.goals; ++g) {
    const Board goal = testing::RandomArrangement(shape.rows, shape.cols, rng);
    const ExhaustiveDistances oracle(goal);
    for (int i = 0; i < shape.boards_per_goal; ++i) {
      const Board start = RandomSolvableBoard(goal, rng);
      const int distance = oracle.Distance(start);
      ASSERT_GE(distance, 0);
      for (const AlgorithmInfo& a : Algorithms()) {
        if (!a.uses_heuristic && i >= shape.blind_boards_per_goal) continue;
        for (const HeuristicInfo& h : Heuristics()) {
          // Informed searches over h = 0 only repeat the uninformed ones.
          if (a.uses_heuristic == (h.name == "zero")) continue;
          // Iterative deepening re-walks the tree once per depth; keep it to
          // the shallower boards.
          if (a.name == "iddfs" && distance > 20) continue;
          const SolveResult r = SolveAndReplay(start, goal, std::string(a.name), std::string(h.name));
          ASSERT_EQ(r.status, SearchStatus::kSolved) << a.name << "/" << h.name;
          if (r.optimal) {
            EXPECT_EQ(static_cast<int>(r.moves.size()), distance)
                << a.name << "/" << h.name << " " << start.ToString() << " -> " << goal.ToString();
            ++checked;
          } else {
            EXPECT_GE(static_cast<int>(r.moves.size()), distance) << a.name;
            EXPECT_EQ(static_cast<int>(r.moves.size()) % 2, distance % 2) << a.name;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, shape.goals * shape.boards_per_goal * 8);
}

INSTANTIATE_TEST_SUITE_P(SmallBoards, OptimalityTest,
                         ::testing::Values(Shape{3, 3, 8, 25, 25}, Shape{2, 4, 10, 20, 20}, Shape{2, 5, 3, 12, 2},
                                           Shape{4, 2, 5, 20, 20}),
                         [](const auto& info) {
                           return std::to_string(info.param.rows) + "x" + std::to_string(info.param.cols);
                         });

TEST(Optimality, OptimalFlagFollowsAlgorithmAndWeight) {
  const Board goal = *Board::Create(3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 0});
  const Board start = *Board::Create(3, 3, {8, 1, 3, 4, 0, 2, 7, 6, 5});
  for (auto [algorithm, optimal] : {std::pair{"bfs", true},
                                    {"iddfs", true},
                                    {"ucs", true},
                                    {"astar", true},
                                    {"idastar", true},
                                    {"dfs", false},
                                    {"greedy", false},
                                    {"wastar", false}}) {
    EXPECT_EQ(SolveAndReplay(start, goal, algorithm, "manhattan").optimal, optimal) << algorithm;
  }
  SolveRequest request{start, goal, "wastar", "manhattan", 1.0};
  EXPECT_TRUE(Solve(request)->optimal);
  EXPECT_EQ(Solve(request)->moves.size(), 14u);
}

}  // namespace
}  // namespace npuzzle
