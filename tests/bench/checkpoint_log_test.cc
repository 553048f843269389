// The benchmark checkpoint (bench/checkpoint_log.h): records survive a
// reopen, a torn last line is dropped, damage, another run's file and a
// file another run holds are refused; and korf_pdb killed with SIGKILL
// mid-iteration resumes at the recorded bound without the subtrees it had
// finished, and still finds the optimal length.
#include "bench/checkpoint_log.h"

#include <climits>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/process_util.h"

namespace npuzzle::bench {
namespace {

using ::testing::HasSubstr;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CheckpointLog, RecordsSurviveAReopen) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/run.log";
  {
    absl::StatusOr<CheckpointLog> log = CheckpointLog::Open(path, "config A");
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_FALSE(log->Progress(1).solved);
    EXPECT_EQ(log->Progress(1).resume_bound, 0);
    ASSERT_TRUE(log->RecordIteration(1, 52, 1000, 0.5).ok());
    ASSERT_TRUE(log->RecordSolved(1, 54, 5000, 2.25).ok());
    ASSERT_TRUE(log->RecordIteration(2, 60, 7000, 3.0).ok());
    ASSERT_TRUE(log->RecordIteration(2, 62, 9000, 4.5).ok());
  }
  absl::StatusOr<CheckpointLog> log = CheckpointLog::Open(path, "config A");
  ASSERT_TRUE(log.ok()) << log.status();
  const InstanceProgress one = log->Progress(1), two = log->Progress(2);
  EXPECT_TRUE(one.solved);
  EXPECT_EQ(one.length, 54);
  EXPECT_EQ(one.generated, 5000u);
  EXPECT_DOUBLE_EQ(one.seconds, 2.25);
  EXPECT_FALSE(two.solved);
  EXPECT_EQ(two.resume_bound, 62);
  EXPECT_EQ(two.generated, 9000u);
  EXPECT_DOUBLE_EQ(two.seconds, 4.5);
}

// A subtree's nodes add to the instance's; its bound must be the
// iteration under way; the next iteration's record supersedes them.
TEST(CheckpointLog, SubtreesOfTheIterationUnderWaySurviveAReopen) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/run.log";
  const SubtreeCheckpoint a{62, 0xabcdef0123456789ULL, 7, 64, 0, 100}, b{62, 0xabcdef0123456789ULL, 3, INT_MAX, 0, 50};
  {
    absl::StatusOr<CheckpointLog> log = CheckpointLog::Open(path, "c");
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_FALSE(log->RecordSubtree(2, a, 0.1).ok()) << "no iteration is under way";
    ASSERT_TRUE(log->RecordIteration(2, 62, 9000, 4.5).ok());
    ASSERT_TRUE(log->RecordSubtree(2, a, 5.0).ok());
    ASSERT_TRUE(log->RecordSubtree(2, b, 5.5).ok());
    EXPECT_FALSE(log->RecordSubtree(2, a, 6.0).ok()) << "recorded twice";
    EXPECT_FALSE(log->RecordSubtree(2, {60, a.frontier, 9, 62, 1}, 6.0).ok()) << "another iteration's";
  }
  absl::StatusOr<CheckpointLog> log = CheckpointLog::Open(path, "c");
  ASSERT_TRUE(log.ok()) << log.status();
  const InstanceProgress two = log->Progress(2);
  EXPECT_EQ(two.resume_bound, 62);
  EXPECT_EQ(two.generated, 9150u);
  EXPECT_DOUBLE_EQ(two.seconds, 5.5);
  ASSERT_EQ(two.subtrees.size(), 2u);
  EXPECT_EQ(two.subtrees[0].frontier, a.frontier);
  EXPECT_EQ(two.subtrees[0].index, 7);
  EXPECT_EQ(two.subtrees[0].next_bound, 64);
  EXPECT_EQ(two.subtrees[1].next_bound, INT_MAX);
  ASSERT_TRUE(log->RecordIteration(2, 64, 9900, 7.0).ok());
  EXPECT_TRUE(log->Progress(2).subtrees.empty());
}

TEST(CheckpointLog, TornLastLineIsDroppedAndCutFromTheFile) {
  testing::TempDir dir;
  const std::string path = dir.Write("run.log", "# korf_pdb checkpoint: c\niteration 3 40 100 1.000\niteration 3 42 2");
  absl::StatusOr<CheckpointLog> log = CheckpointLog::Open(path, "c");
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->Progress(3).resume_bound, 40);
  ASSERT_TRUE(log->RecordIteration(3, 42, 300, 2.0).ok());
  EXPECT_EQ(Read(path), "# korf_pdb checkpoint: c\niteration 3 40 100 1.000\niteration 3 42 300 2.000\n");
}

TEST(CheckpointLog, AnotherRunsFileIsRefused) {
  testing::TempDir dir;
  const std::string path = dir.Write("run.log", "# korf_pdb checkpoint: preset=7-8\n");
  absl::StatusOr<CheckpointLog> log = CheckpointLog::Open(path, "preset=6-6-3");
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.status().message(), HasSubstr("written for another run"));
  EXPECT_THAT(log.status().message(), HasSubstr("preset=7-8"));
}

TEST(CheckpointLog, DamagedLinesAreRefusedByNumber) {
  testing::TempDir dir;
  for (const char* damaged :
       {"iteration 3 40 100\n", "iteration x 40 100 1.0\n", "finished 3 40 100 1.0\n",
        "iteration 3 40 100 1.0\niteration 3 38 200 2.0\n", "solved 3 50 100 1.0\niteration 3 52 200 2.0\n",
        "iteration 3 40 100 -1\n", "iteration 3 40 100 1.0\nsubtree 3 40 00ff 2 42 10\n",
        "iteration 3 40 100 1.0\nsubtree 3 40 00fz 2 42 10 1.5\n",
        "iteration 3 40 100 1.0\nsubtree 3 40 00ff 2 40 10 1.5\n",
        "iteration 3 40 100 1.0\nsubtree 3 42 00ff 2 44 10 1.5\n",
        "iteration 3 40 100 1.0\nsubtree 3 40 00ff -1 42 10 1.5\n",
        "iteration 3 40 100 1.0\nsubtree 3 40 00ff 2 42 10 1.5\nsubtree 3 40 00ff 2 42 10 1.6\n"}) {
    const std::string path = dir.Write("run.log", absl::StrCat("# korf_pdb checkpoint: c\n", damaged));
    absl::StatusOr<CheckpointLog> log = CheckpointLog::Open(path, "c");
    ASSERT_FALSE(log.ok()) << damaged;
    EXPECT_THAT(log.status().message(), HasSubstr("run.log line ")) << damaged;
  }
}

TEST(CheckpointLog, ASecondRunOnTheSameFileIsRefusedWhileTheFirstHoldsIt) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/run.log";
  {
    absl::StatusOr<CheckpointLog> first = CheckpointLog::Open(path, "c");
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<CheckpointLog> second = CheckpointLog::Open(path, "c");
    ASSERT_FALSE(second.ok());
    EXPECT_THAT(second.status().message(), HasSubstr("in use by another run"));
    ASSERT_TRUE(first->RecordIteration(4, 50, 10, 0.1).ok());
  }
  absl::StatusOr<CheckpointLog> again = CheckpointLog::Open(path, "c");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->Progress(4).resume_bound, 50);
}

TEST(CheckpointLog, AFileThatCannotBeWrittenIsAnError) {
  absl::StatusOr<CheckpointLog> log = CheckpointLog::Open("/nonexistent-dir/run.log", "c");
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.status().message(), HasSubstr("/nonexistent-dir/run.log"));
}

// A real run killed with SIGKILL once it has recorded a finished subtree
// of an iteration, then run again with the same file: the instance resumes
// at that iteration's bound without the subtrees recorded, and is solved
// optimally; a third run only reports it.
TEST(KorfPdbCheckpoint, KilledRunResumesAtItsBoundAndStaysOptimal) {
  testing::TempDir dir;
  const std::string log = dir.path() + "/run.log";
  // Korf's instance 88 with the weak 5-5-5 tables, no mirror and no
  // pruning machine: many iterations, each growing, on one thread.
  const std::string run = absl::StrCat(NPUZZLE_BIN_DIR,
                                       "/korf_pdb --preset 5-5-5 --first 88 --last 88 --threads 1 --mirror=false "
                                       "--pruning_length 2 --checkpoint ",
                                       log);
  const testing::CommandResult killed = testing::RunCommand(absl::StrCat(
      run, " > ", dir.path(), "/first.out 2>&1 & pid=$!; ", "for i in $(seq 2400); do grep -q '^subtree' ", log,
      " 2>/dev/null && break; sleep 0.05; done; { kill -9 $pid; wait $pid; } 2>/dev/null; echo status=$?"));
  ASSERT_THAT(killed.out, HasSubstr("status=137")) << killed.out << Read(dir.path() + "/first.out");
  const std::string recorded = Read(log);
  ASSERT_THAT(recorded, HasSubstr("\niteration 88 ")) << recorded;
  ASSERT_THAT(recorded, ::testing::Not(HasSubstr("solved"))) << "the run finished before the kill";
  // The bound of the last iteration line, and the subtrees after it.
  std::string resume_bound;
  int subtrees = 0;
  for (const absl::string_view line : absl::StrSplit(recorded, '\n', absl::SkipEmpty())) {
    const std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields[0] == "iteration") {
      resume_bound = fields[2];
      subtrees = 0;
    }
    subtrees += fields[0] == "subtree";
  }
  ASSERT_GT(subtrees, 0) << recorded;

  const testing::CommandResult resumed = testing::RunCommand(run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_THAT(resumed.out,
              HasSubstr(absl::StrCat("(resumed at bound ", resume_bound, ", ", subtrees, " of its subtrees done)")));
  EXPECT_THAT(resumed.out, HasSubstr("1/1 optimal"));
  EXPECT_THAT(Read(log), HasSubstr("\nsolved 88 "));

  const testing::CommandResult again = testing::RunCommand(run);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("(from the checkpoint)"));
  EXPECT_THAT(again.out, HasSubstr("1/1 optimal"));
}

}  // namespace
}  // namespace npuzzle::bench
