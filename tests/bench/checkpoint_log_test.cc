// The benchmark checkpoint (bench/checkpoint_log.h): records survive a
// reopen, a torn last line is dropped, damage, another run's file and a
// file another run holds are refused; and korf_pdb killed with SIGKILL mid-instance resumes at the
// recorded bound and still finds the optimal length.
#include "bench/checkpoint_log.h"

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
  for (const char* damaged : {"iteration 3 40 100\n", "iteration x 40 100 1.0\n", "finished 3 40 100 1.0\n",
                              "iteration 3 40 100 1.0\niteration 3 38 200 2.0\n",
                              "solved 3 50 100 1.0\niteration 3 52 200 2.0\n", "iteration 3 40 100 -1\n"}) {
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

// A real run killed with SIGKILL once its first iteration is on disk, then
// run again with the same file: the instance resumes at the recorded bound
// and is solved optimally; a third run only reports it.
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
      run, " > ", dir.path(), "/first.out 2>&1 & pid=$!; ", "for i in $(seq 2400); do grep -q '^iteration' ", log,
      " 2>/dev/null && break; sleep 0.05; done; { kill -9 $pid; wait $pid; } 2>/dev/null; echo status=$?"));
  ASSERT_THAT(killed.out, HasSubstr("status=137")) << killed.out << Read(dir.path() + "/first.out");
  const std::string recorded = Read(log);
  ASSERT_THAT(recorded, HasSubstr("\niteration 88 ")) << recorded;
  ASSERT_THAT(recorded, ::testing::Not(HasSubstr("solved"))) << "the run finished before the kill";
  const std::vector<std::string> lines = absl::StrSplit(recorded, '\n', absl::SkipEmpty());
  const std::vector<std::string> last = absl::StrSplit(lines.back(), ' ');
  const std::string resume_bound = last[2];

  const testing::CommandResult resumed = testing::RunCommand(run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr(absl::StrCat("(resumed at bound ", resume_bound, ")")));
  EXPECT_THAT(resumed.out, HasSubstr("1/1 optimal"));
  EXPECT_THAT(Read(log), HasSubstr("\nsolved 88 "));

  const testing::CommandResult again = testing::RunCommand(run);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("(from the checkpoint)"));
  EXPECT_THAT(again.out, HasSubstr("1/1 optimal"));
}

}  // namespace
}  // namespace npuzzle::bench
