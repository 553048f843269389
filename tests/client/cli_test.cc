// The npuzzle command line, run as a user would run it.
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/board_parser.h"
#include "engine/moves.h"
#include "engine/puzzle.h"
#include "engine/solvability.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/process_util.h"
#include "tests/util/solve_util.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;
using testing::RunCommand;

std::string Cli(const std::string& args) { return std::string(NPUZZLE_CLI) + " " + args; }

std::vector<nlohmann::json> JsonLines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    lines.push_back(nlohmann::json::parse(std::string(line)));
  }
  return lines;
}

// The answer in a JSON result replays from its start to its goal.
void ExpectReplays(const nlohmann::json& j) {
  const Board start = *ParseBoard(j["start"].get<std::string>());
  const Board goal = *ParseBoard(j["goal"].get<std::string>());
  testing::ExpectReplays(start, goal, j["moves"].get<std::string>(), j["length"].get<int64_t>(), j.dump());
  EXPECT_EQ(j["tile_moves"].get<std::vector<int>>(), *TilesMoved(start, *ParseMoves(j["moves"].get<std::string>())));
}

// Each command's help lists the flags it takes, with their defaults, and
// only those: a flag of another command is an error there, naming it.
TEST(Cli, EachCommandTakesItsOwnFlags) {
  const auto solve = RunCommand(Cli("solve --help"));
  EXPECT_EQ(solve.exit_code, 0);
  EXPECT_THAT(solve.out, HasSubstr("Usage: npuzzle solve"));
  EXPECT_THAT(solve.out, HasSubstr("--algorithm TEXT=auto"));
  EXPECT_THAT(solve.out, HasSubstr("bfs, dfs, iddfs"));
  EXPECT_THAT(solve.out, ::testing::Not(HasSubstr("--page-size")));
  const auto list = RunCommand(Cli("list -h"));
  EXPECT_THAT(list.out, HasSubstr("--page-size INT=50"));
  EXPECT_THAT(list.out, ::testing::Not(HasSubstr("--board")));
  const auto gen = RunCommand(Cli("gen --help"));
  EXPECT_THAT(gen.out, HasSubstr("--seed UINT"));
  EXPECT_THAT(gen.out, HasSubstr("the random boards' seed"));
  const auto wrong = RunCommand(Cli("get --board '8 1 3 4 0 2 7 6 5' job-1"));
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.err, HasSubstr("npuzzle get: unknown flag --board"));
}

TEST(Cli, SolveJsonHasEveryField) {
  const auto r = RunCommand(Cli("solve --board '8 1 3 4 0 2 7 6 5' --json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  const nlohmann::json& j = lines[0];
  for (const char* field : {"status", "moves", "tile_moves", "length", "optimal", "expanded", "generated", "max_open",
                            "elapsed_ms", "algorithm", "heuristic", "lower_bound", "chosen", "stopped_by"}) {
    EXPECT_TRUE(j.contains(field)) << field;
  }
  EXPECT_EQ(j["status"], "solved");
  EXPECT_EQ(j["length"], 14);
  EXPECT_EQ(j["optimal"], true);
  EXPECT_EQ(j["lower_bound"], 14);
  EXPECT_EQ(j["algorithm"], "auto");
  EXPECT_EQ(j["heuristic"], "linear-conflict");
  EXPECT_EQ(j["stopped_by"], "proved optimal");
  ExpectReplays(j);
}

TEST(Cli, HumanOutputShowsBoardsMovesAndSteps) {
  const auto r = RunCommand(Cli("solve --board '134 8b5 726' --goal-preset snail --show-steps"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("solved in 6 moves (optimal) with auto + linear-conflict"));
  EXPECT_THAT(r.out, HasSubstr("chose idastar with linear-conflict"));
  EXPECT_THAT(r.out, HasSubstr("moves (blank): DRUULD"));
  EXPECT_THAT(r.out, HasSubstr("tiles moved:   2 6 5 4 3 2"));
  EXPECT_THAT(r.out, HasSubstr("step 6: D (tile 2)\n 1 2 3\n 8 . 4\n 7 6 5"));
  EXPECT_THAT(r.out, HasSubstr("expanded"));
}

TEST(Cli, DashedAndUnderscoredFlagsBothWork) {
  for (const char* flags : {"--algorithm=idastar --heuristic=linear-conflict --max-nodes=100000",
                            "--algorithm idastar --heuristic linear-conflict --max_nodes 100000"}) {
    const auto r = RunCommand(Cli(std::string("solve --board '8 1 3 4 0 2 7 6 5' --json ") + flags));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(JsonLines(r.out)[0]["heuristic"], "linear-conflict");
  }
}

TEST(Cli, BadInputExitsNonZeroWithTheReason) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : {
           Case{"solve --board '1 2 3 4 5 5 7 8 0'", "duplicate tile 5"},
           Case{"solve --board '1 2 3 4 5 6 7 8'", "cannot tell the board's shape from 8 tiles"},
           Case{"solve --board '8 1 3 4 0 2 7 6 5' --algorithm dijkstra", "unknown algorithm 'dijkstra'"},
           Case{"pdb --rows 9", "pattern tables are for boards up to 8x8, not 9x9"},
           Case{"solve --rows 9 --board \"$(seq -s ' ' 1 80) 0\" --algorithm astar",
                "astar takes boards up to 8x8, not 9x9"},
           Case{"solve --board '8 1 3 4 0 2 7 6 5' --algorithm astar --heuristic euclid", "unknown heuristic 'euclid'"},
           Case{"solve --board '8 1 3 4 0 2 7 6 5' --goal-preset spiral", "unknown goal preset 'spiral'"},
           Case{"solve --board '8 1 3 4 0 2 7 6 5' --goal '1 2 3 4 0 5 6 7'", "goal: "},
           Case{"solve --board '8 1 3 4 0 2 7 6 5' --weight 3", "a weight applies only to wastar"},
           Case{"frobnicate", "unknown command 'frobnicate'"},
           Case{"solve --bord '8 1 3 4 0 2 7 6 5'", "unknown flag --bord (did you mean --board?)"},
           Case{"solve --board '8 1 3 4 0 2 7 6 5' --max-nodes lots", "--max-nodes"},
           Case{"solve --file boards.txt --board '8 1 3 4 0 2 7 6 5'", "give either --board or --file"},
       }) {
    const auto r = RunCommand(Cli(c.args));
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
  }
}

TEST(Cli, UnsolvableIsAnAnswer) {
  const auto r = RunCommand(Cli("solve --board '1 2 3 4 5 6 8 7 0' --json"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(JsonLines(r.out)[0]["status"], "unsolvable");
}

TEST(Cli, LimitsLeaveProblemsUnanswered) {
  const auto r = RunCommand(Cli("solve --board '8 6 7 2 5 4 3 0 1' --algorithm bfs --max-nodes 1000 --json"));
  EXPECT_EQ(r.exit_code, 3);
  const nlohmann::json j = JsonLines(r.out)[0];
  EXPECT_EQ(j["status"], "node_limit");
  EXPECT_EQ(j["expanded"], 1000);
  const auto human = RunCommand(Cli("solve --board '8 6 7 2 5 4 3 0 1' --algorithm bfs --max-nodes 1000"));
  EXPECT_THAT(human.out, HasSubstr("no answer within 1000 state expansions"));
}

TEST(Cli, KunklePairsFile) {
  testing::TempDir dir;
  const std::string file = dir.Write("pairs.txt",
                                     "# start, then goal\n"
                                     "134 8b5 726\n123 8b4 765\n\n"
                                     "231 7b8 654\n123 8b4 765\n"
                                     "1 2 3 4 5 6 8 7 0\n1 2 3 4 5 6 7 8 0\n");
  const auto r = RunCommand(Cli("solve --json --pairs --file " + file));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["length"], 6);
  EXPECT_EQ(lines[1]["length"], 14);
  EXPECT_EQ(lines[2]["status"], "unsolvable");
  ExpectReplays(lines[0]);
  ExpectReplays(lines[1]);
}

// Without --pairs a file holds one start board a line, each solved for the
// goal of the flags (standard by default), so `gen | solve` solves every
// board gen printed.
TEST(Cli, OneBoardALineUnlessTheLinesArePairs) {
  const auto r = RunCommand(Cli("gen --count 6 --seed 5 --rows 3") + " | " + Cli("solve --json --algorithm idastar"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonLines(r.out).size(), 6u);
  const auto odd = RunCommand("printf '8 1 3 4 0 2 7 6 5\\n' | " + Cli("solve --pairs"));
  EXPECT_EQ(odd.exit_code, 2);
  EXPECT_THAT(odd.err, HasSubstr("expected pairs of lines"));
}

TEST(Cli, BoardPerLineFromStdinWithACommonGoal) {
  testing::TempDir dir;
  const std::string file = dir.Write("boards.txt", "8 1 3 4 0 2 7 6 5\n1 2 3 4 5 6 7 0 8\n");
  const auto r = RunCommand("cat " + file + " | " + Cli("solve --goal-preset standard --json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["length"], 14);
  EXPECT_EQ(lines[1]["length"], 1);
}

TEST(Cli, BadLinesInAFileAreAllNamed) {
  testing::TempDir dir;
  const std::string file = dir.Write("boards.txt", "8 1 3 4 0 2 7 6 5\n1 2 3 4 5 6 7 7 0\n1 2 x\n");
  const auto r = RunCommand(Cli("solve --goal-preset standard --file " + file));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("line 2: duplicate tile 7"));
  EXPECT_THAT(r.err, HasSubstr("line 3: unknown token 'x'"));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, GenIsSeededSolvableAndWalksStayClose) {
  const auto a = RunCommand(Cli("gen --rows 4 --cols 4 --count 20 --seed 7 --goal-preset blank-first"));
  const auto b = RunCommand(Cli("gen --rows 4 --cols 4 --count 20 --seed 7 --goal-preset blank-first"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const Board goal = *ParseBoard("0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15");
  std::vector<std::string> lines = absl::StrSplit(a.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 20u);
  for (const std::string& line : lines) EXPECT_TRUE(IsSolvable(*ParseBoard(line), goal)) << line;

  testing::TempDir dir;
  const auto walks = RunCommand(Cli("gen --rows 3 --cols 5 --walk 12 --count 10 --seed 3 --goal-preset snail"));
  const std::string file = dir.Write("walks.txt", walks.out);
  const auto solved = RunCommand(Cli("solve --goal-preset snail --algorithm idastar --json --file " + file));
  ASSERT_EQ(solved.exit_code, 0) << solved.err;
  for (const nlohmann::json& j : JsonLines(solved.out)) {
    EXPECT_LE(j["length"].get<int>(), 12);
    ExpectReplays(j);
  }
}

// Two processes started at once on one table directory (two workers on a
// shared volume, say): each table is built by one of them and loaded by
// the other, and a third builds nothing.
TEST(Cli, TwoProcessesBuildEachTableOnce) {
  const testing::TempDir dir;
  const std::string pdb =
      Cli(absl::StrCat("pdb --rows 4 --cols 4 --goal-preset blank-first --pdb-preset 6-6-3 --data-dir ", dir.path()));
  const auto both = RunCommand(absl::StrCat("(", pdb, " 2>&1; echo exit=$?) > ", dir.path(), "/a.log & (", pdb,
                                            " 2>&1; echo exit=$?) > ", dir.path(), "/b.log & wait; cat ", dir.path(),
                                            "/a.log ", dir.path(), "/b.log"));
  ASSERT_EQ(both.exit_code, 0) << both.err;
  auto count = [](const std::string& text, absl::string_view what) {
    int n = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) n += absl::StrContains(line, what);
    return n;
  };
  EXPECT_EQ(count(both.out, "exit=0"), 2) << both.out;
  EXPECT_EQ(count(both.out, "built pattern table"), 3) << both.out;
  EXPECT_EQ(count(both.out, "loaded pattern table"), 3) << both.out;
  const auto third = RunCommand(pdb + " 2>&1");
  EXPECT_EQ(third.exit_code, 0);
  EXPECT_EQ(count(third.out, "built pattern table"), 0) << third.out;
  EXPECT_THAT(third.out, HasSubstr("11534880 entries"));
  EXPECT_THAT(third.out, HasSubstr(absl::StrCat("cached in ", dir.path(), "/pdb")));
}

// Tables built without --data-dir go to the user's cache, which a server
// does not read: the command says where they went and how to build them
// for the service.
TEST(Cli, PdbSaysWhereTablesGoAndWhereAServerLooks) {
  const testing::TempDir home;
  const auto r = RunCommand(absl::StrCat("env -u NPUZZLE_DATA_DIR -u XDG_CACHE_HOME HOME=", home.path(), " ",
                                         Cli("pdb --rows 3 --cols 3"), " 2>/dev/null"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("cached in ", home.path(), "/.cache/npuzzle/pdb")));
  EXPECT_THAT(r.out, HasSubstr("give --data-dir npuzzle-data"));
}

}  // namespace
}  // namespace npuzzle
