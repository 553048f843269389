#include "tests/util/solve_util.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "engine/moves.h"
#include "engine/puzzle.h"

namespace npuzzle::testing {

SolveResult SolveAndReplay(const Board& start, const Board& goal, const std::string& algorithm,
                           const std::string& heuristic, SearchOptions options) {
  SolveRequest request;
  request.start = start;
  request.goal = goal;
  request.algorithm = algorithm;
  request.heuristic = heuristic;
  request.options = std::move(options);
  absl::StatusOr<SolveResult> result = Solve(request);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  if (result->status == SearchStatus::kSolved) {
    absl::StatusOr<Board> end = ApplyMoves(start, result->moves);
    EXPECT_TRUE(end.ok() && *end == goal) << algorithm << "/" << heuristic << " moves " << MovesToString(result->moves)
                                          << " do not take " << start.ToString() << " to " << goal.ToString();
    EXPECT_EQ(result->tile_moves, *TilesMoved(start, result->moves));
  }
  return *std::move(result);
}

void ExpectReplays(const Board& start, const Board& goal, absl::string_view moves, int64_t length,
                   absl::string_view context) {
  absl::StatusOr<std::vector<Dir>> parsed = ParseMoves(moves);
  ASSERT_TRUE(parsed.ok()) << context << ": " << parsed.status();
  absl::StatusOr<Board> end = ApplyMoves(start, *parsed);
  ASSERT_TRUE(end.ok()) << context << ": " << end.status();
  EXPECT_EQ(*end, goal) << context << ": " << moves << " does not take " << start.ToString() << " to "
                        << goal.ToString();
  EXPECT_EQ(length, static_cast<int64_t>(parsed->size())) << context;
}

std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> fields = absl::StrSplit(line, '|');
  for (std::string& f : fields) absl::StripAsciiWhitespace(&f);
  return fields;
}

std::string DataPath(const std::string& name) { return std::string(NPUZZLE_TEST_DATA_DIR) + "/" + name; }

}  // namespace npuzzle::testing
