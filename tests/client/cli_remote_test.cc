// The npuzzle CLI against a real server with a local worker: many boards
// submitted from a file or stdin, one id a line, and watch following
// several jobs (by id or by label) with one summary line each.
#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/process_util.h"
#include "tests/util/service_harness.h"

namespace npuzzle {
namespace {

using testing::CommandResult;
using testing::Coordinator;
using ::testing::HasSubstr;
using testing::RunCommand;
using testing::TempDir;

std::vector<std::string> Lines(const std::string& out) { return absl::StrSplit(out, '\n', absl::SkipEmpty()); }

class CliRemote : public ::testing::Test {
 protected:
  void SetUp() override { coordinator_.Start(); }

  CommandResult Cli(const std::string& args) {
    return RunCommand(absl::StrCat(NPUZZLE_BIN_DIR, "/npuzzle ", args, " --server ", coordinator_.client_address()));
  }

  TempDir dir_;
  Coordinator coordinator_{dir_, 1};
};

TEST_F(CliRemote, SubmitAFileThenWatchThemAll) {
  const std::string boards = dir_.Write("boards",
                                        "# three 8-puzzles\n8 1 3 4 0 2 7 6 5\n\n1 2 3 4 5 6 7 0 8\n"
                                        "8 6 7 2 5 4 3 0 1\n");
  const CommandResult submitted = Cli("submit --goal-preset standard --label batch=file --file " + boards);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::vector<std::string> ids = Lines(submitted.out);
  ASSERT_EQ(ids.size(), 3u) << submitted.out;
  for (const std::string& id : ids) EXPECT_TRUE(absl::StartsWith(id, "job-")) << id;

  const CommandResult watched = Cli(absl::StrCat("watch ", ids[0], " ", ids[1], " ", ids[2]));
  EXPECT_EQ(watched.exit_code, 0) << watched.err;
  const std::vector<std::string> lines = Lines(watched.out);
  ASSERT_EQ(lines.size(), 3u) << watched.out;
  const int lengths[] = {14, 1, 31};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(lines[i], absl::StrCat(ids[i], " done: solved, ", lengths[i], " moves")) << watched.out;
  }

  // All jobs with the label, oldest first, as JSON.
  const CommandResult by_label = Cli("watch --label batch=file --json");
  EXPECT_EQ(by_label.exit_code, 0) << by_label.err;
  const std::vector<std::string> json = Lines(by_label.out);
  ASSERT_EQ(json.size(), 3u) << by_label.out;
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json job = nlohmann::json::parse(json[i]);
    EXPECT_EQ(job["id"], ids[i]);
    EXPECT_EQ(job["result"]["length"], lengths[i]);
  }
}

TEST_F(CliRemote, SubmitFromStdinAndWatchReportsTheWorst) {
  const CommandResult submitted = RunCommand(absl::StrCat("printf '1 2 3 4 5 6 7 0 8\\n2 1 3 4 5 6 7 8 0\\n' | ",
                                                          NPUZZLE_BIN_DIR, "/npuzzle submit --goal-preset standard",
                                                          " --file - --server ", coordinator_.client_address()));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::vector<std::string> ids = Lines(submitted.out);
  ASSERT_EQ(ids.size(), 2u);
  // The second board is unsolvable: an answer all the same.
  const CommandResult both = Cli(absl::StrCat("watch --job ", ids[0], " ", ids[1]));
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_THAT(both.out, HasSubstr(ids[1] + " done: unsolvable"));

  // An unknown job among them: named on stderr, the others still reported.
  const CommandResult unknown = Cli(absl::StrCat("watch ", ids[0], " job-missing"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.out, HasSubstr(ids[0] + " done: solved"));
  EXPECT_THAT(unknown.err, HasSubstr("job-missing: no job with id 'job-missing'"));

  const CommandResult none = Cli("watch");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("give the jobs: ids as arguments, --job ID, or --label K=V"));
  const CommandResult nothing_labelled = Cli("watch --label batch=none");
  EXPECT_EQ(nothing_labelled.exit_code, 2);
  // Every command takes job ids the same way: as arguments, or --job.
  for (const char* command : {"get", "cancel"}) {
    for (const char* form : {" job-x", " --job job-x"}) {
      const CommandResult missing = Cli(absl::StrCat(command, form));
      EXPECT_EQ(missing.exit_code, 2) << command << form;
      EXPECT_THAT(missing.err, HasSubstr("no job with id 'job-x'")) << command << form;
    }
  }
  const CommandResult got = Cli(absl::StrCat("get ", ids[0], " ", ids[1]));
  EXPECT_EQ(got.exit_code, 0) << got.err;
  EXPECT_THAT(got.out, HasSubstr("solved in"));
  EXPECT_THAT(got.out, HasSubstr("unsolvable: the start cannot reach this goal"));
}

// A script reads one result shape whether the solve ran here or on a server.
TEST_F(CliRemote, SolveJsonEndsWithTheLocalShape) {
  const CommandResult remote = Cli("solve --board '8 1 3 4 0 2 7 6 5' --json");
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  const CommandResult local =
      RunCommand(absl::StrCat(NPUZZLE_BIN_DIR, "/npuzzle solve --board '8 1 3 4 0 2 7 6 5' --json"));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  const nlohmann::json here = nlohmann::json::parse(Lines(local.out).back());
  // Events first (none, when the job was done before the watch began).
  const std::vector<std::string> lines = Lines(remote.out);
  ASSERT_GE(lines.size(), 1u) << remote.out;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const nlohmann::json event = nlohmann::json::parse(lines[i]);
    EXPECT_TRUE(event.contains("state") || event.contains("progress")) << lines[i];
  }
  const nlohmann::json there = nlohmann::json::parse(lines.back());
  std::vector<std::string> here_keys, there_keys;
  for (const auto& [key, value] : here.items()) here_keys.push_back(key);
  for (const auto& [key, value] : there.items()) there_keys.push_back(key);
  EXPECT_EQ(here_keys, there_keys);
  for (const char* same : {"start", "goal", "rows", "cols", "moves", "tile_moves", "length", "optimal", "status",
                           "algorithm", "heuristic", "expanded", "start_h"}) {
    EXPECT_EQ(here[same], there[same]) << same;
  }
}

// IDA* with the weakest heuristic on Korf's first instance: far longer
// than a test.
constexpr char kLongBoard[] = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3";

// Ctrl-C on `solve --server` cancels the job it submitted, and says so;
// with --detach it leaves the job running and says how to follow it.
TEST_F(CliRemote, CtrlCOnSolveCancelsItsJobUnlessDetached) {
  for (const bool detach : {false, true}) {
    const std::string log = dir_.path() + (detach ? "/detached.log" : "/cancelled.log");
    std::vector<std::string> argv = {std::string(NPUZZLE_BIN_DIR) + "/npuzzle",
                                     "solve",
                                     "--board",
                                     kLongBoard,
                                     "--goal-preset",
                                     "blank-first",
                                     "--algorithm",
                                     "idastar",
                                     "--heuristic",
                                     "misplaced",
                                     "--server",
                                     coordinator_.client_address()};
    if (detach) argv.push_back("--detach");
    testing::Process cli(argv, log);
    const absl::Time deadline = absl::Now() + testing::Scaled(absl::Seconds(20));
    std::string id;
    while (id.empty() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(50));
      for (const std::string& line : Lines(cli.Log())) {
        if (absl::StartsWith(line, "job-")) id = line.substr(0, line.find(' '));
      }
    }
    ASSERT_FALSE(id.empty()) << cli.Log();
    ASSERT_TRUE(testing::AwaitState(coordinator_.stub(), id, v1::JOB_STATE_RUNNING, absl::Seconds(10)).ok());
    cli.Signal(SIGINT);
    EXPECT_EQ(cli.Wait(absl::Seconds(10)), 3) << cli.Log();
    if (detach) {
      EXPECT_THAT(cli.Log(), HasSubstr(absl::StrCat(id, " goes on running; npuzzle watch ", id)));
      EXPECT_EQ(testing::GetJob(coordinator_.stub(), id)->state(), v1::JOB_STATE_RUNNING);
      v1::Job cancelled;
      EXPECT_TRUE(testing::Cancel(coordinator_.stub(), id, &cancelled).ok());  // frees the worker
    } else {
      EXPECT_THAT(cli.Log(), HasSubstr(absl::StrCat("Ctrl-C: cancelling ", id)));
      EXPECT_EQ(testing::GetJob(coordinator_.stub(), id)->state(), v1::JOB_STATE_CANCELLED);
    }
  }
}

// A client that dials the worker port by mistake is told so.
TEST_F(CliRemote, TheWorkerPortSaysItIsNotTheClientApi) {
  const CommandResult r = RunCommand(absl::StrCat(
      NPUZZLE_BIN_DIR, "/npuzzle solve --board '8 1 3 4 0 2 7 6 5' --server ", coordinator_.worker_address()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("is it the worker port? Clients use the server's --listen port"));
}

}  // namespace
}  // namespace npuzzle
