// Every program's command line as a user meets it: --help lists the
// program's (or the command's) own flags in kebab-case with nothing of the
// libraries underneath or the build machine; a misspelt flag exits with
// status 2 and suggests the nearest; a bad value names where it came from.
#include <regex>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/process_util.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunCommand;

std::string Bin(const std::string& program) { return absl::StrCat(NPUZZLE_BIN_DIR, "/", program); }

// The help text of `command`: exit 0, the flags it names all kebab-case,
// and none of absl's flags or a source path.
std::string ExpectHelp(const std::string& command) {
  const auto r = RunCommand(command + " --help");
  EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
  const std::regex flag("--[A-Za-z0-9_-]+");
  int flags = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), flag); it != std::sregex_iterator(); ++it) {
    const std::string name = it->str();
    EXPECT_EQ(name.find('_'), std::string::npos) << command << " lists " << name;
    ++flags;
  }
  EXPECT_GT(flags, 1) << command;
  for (const char* leak : {"--helpfull", "--flagfile", "--fromenv", "absl", ".cc", "/work/", "No flags matched"}) {
    EXPECT_THAT(r.out, Not(HasSubstr(leak))) << command;
  }
  return r.out;
}

TEST(CommandLine, EveryProgramAndCommandListsItsOwnFlags) {
  EXPECT_THAT(ExpectHelp(Bin("npuzzle-server")), HasSubstr("--max-queued INT=10000"));
  EXPECT_THAT(ExpectHelp(Bin("npuzzle-server") + " backup"), HasSubstr("Usage: npuzzle-server backup"));
  EXPECT_THAT(ExpectHelp(Bin("npuzzle-worker")), HasSubstr("--coordinator TEXT=localhost:50052"));
  const std::string usage = ExpectHelp(Bin("npuzzle"));
  for (const char* command : {"solve", "gen", "pdb", "submit", "watch", "get", "cancel", "list"}) {
    EXPECT_THAT(usage, HasSubstr(absl::StrCat("  ", command, " "))) << command;
    EXPECT_THAT(ExpectHelp(Bin("npuzzle") + " " + command), HasSubstr(absl::StrCat("Usage: npuzzle ", command)));
  }
}

TEST(CommandLine, AMisspeltFlagExitsWithStatusTwoAndSuggestsTheNearest) {
  struct Case {
    std::string command, says;
  };
  for (const Case& c :
       {Case{Bin("npuzzle-server") + " --max-queud 3", "unknown flag --max-queud (did you mean --max-queued?)"},
        Case{Bin("npuzzle-worker") + " --concurency=2", "(did you mean --concurrency?)"},
        Case{Bin("npuzzle") + " solve --heurstic manhattan", "(did you mean --heuristic?)"},
        Case{Bin("npuzzle") + " list --server x --page_sise 3", "(did you mean --page-size?)"},
        Case{Bin("npuzzle") + " solve --zzzzzzzz", "unknown flag --zzzzzzzz\n"}}) {
    const auto r = RunCommand(c.command);
    EXPECT_EQ(r.exit_code, 2) << c.command;
    EXPECT_THAT(r.err, HasSubstr(c.says)) << c.command;
    EXPECT_THAT(r.err, HasSubstr("--help lists the flags")) << c.command;
  }
}

TEST(CommandLine, BadValuesNameTheFlagAndTheVariableTheyCameFrom) {
  const auto flag = RunCommand(Bin("npuzzle-server") + " --max-queued=lots");
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_THAT(flag.err, HasSubstr("--max-queued"));
  const auto variable = RunCommand("NPUZZLE_LEASE_TIMEOUT_MS=soon " + Bin("npuzzle-server"));
  EXPECT_EQ(variable.exit_code, 2);
  EXPECT_THAT(variable.err, HasSubstr("NPUZZLE_LEASE_TIMEOUT_MS='soon'"));
  const auto invalid = RunCommand(Bin("npuzzle-server") + " --max-queued=0 --local-workers=-3");
  EXPECT_EQ(invalid.exit_code, 2);
  EXPECT_THAT(invalid.err, HasSubstr("--max-queued must be at least 1"));
  EXPECT_THAT(invalid.err, HasSubstr("--local-workers must be -1"));
}

}  // namespace
}  // namespace npuzzle
