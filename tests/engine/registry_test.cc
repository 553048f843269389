// The registry is the one list of algorithms and heuristics: the options
// each takes are checked from it, and every place that lists names for
// people (the proto comments, docs/solving.md) must say what it says.
#include "engine/registry.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/goals.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/solver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(NPUZZLE_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in) << relative;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

template <class Infos>
std::set<std::string> Names(const Infos& infos) {
  std::set<std::string> names;
  for (const auto& info : infos) names.insert(std::string(info.name));
  return names;
}

std::set<std::string> PresetNames() {
  std::set<std::string> names;
  for (const std::string& described : PatternPresetNames()) {
    names.insert(described.substr(0, described.find(' ')));
  }
  return names;
}

// The comment line just above `field_declaration` in the proto, as a list:
// "// a, b, c (default b)." -> {a, b, c}.
std::set<std::string> ProtoCommentList(const std::string& proto, const std::string& field_declaration) {
  const size_t field = proto.find(field_declaration);
  EXPECT_NE(field, std::string::npos) << field_declaration;
  if (field == std::string::npos) return {};
  const size_t line_end = proto.rfind('\n', field);
  const size_t line_begin = proto.rfind('\n', line_end - 1) + 1;
  absl::string_view comment =
      absl::StripAsciiWhitespace(absl::string_view(proto).substr(line_begin, line_end - line_begin));
  EXPECT_TRUE(absl::ConsumePrefix(&comment, "// ")) << comment;
  std::string line = std::regex_replace(std::string(comment), std::regex(R"( \([^)]*\))"), "");
  line = std::string(absl::StripSuffix(line, "."));
  std::set<std::string> names;
  for (absl::string_view name : absl::StrSplit(line, ", ")) names.insert(std::string(name));
  return names;
}

// The `code` words of the docs bullet that starts with `bullet`, up to
// the next bullet or paragraph, leaving out flags.
std::set<std::string> DocBulletList(const std::string& readme, const std::string& bullet) {
  const size_t begin = readme.find("\n- " + bullet);
  EXPECT_NE(begin, std::string::npos) << bullet;
  if (begin == std::string::npos) return {};
  const size_t end = std::min(readme.find("\n- ", begin + 1), readme.find("\n\n", begin + 1));
  const std::string text = readme.substr(begin, end - begin);
  std::set<std::string> names;
  const std::regex code("`([^`]+)`");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), code); it != std::sregex_iterator(); ++it) {
    const std::string word = (*it)[1];
    if (!word.starts_with("-")) names.insert(word);
  }
  return names;
}

TEST(Registry, ProtoCommentsListTheRegistry) {
  const std::string proto = ReadSource("proto/npuzzle/v1/solver.proto");
  EXPECT_EQ(ProtoCommentList(proto, "string algorithm = "), Names(Algorithms()));
  EXPECT_EQ(ProtoCommentList(proto, "string heuristic = "), Names(Heuristics()));
}

TEST(Registry, TheDocsListTheRegistry) {
  const std::string readme = ReadSource("docs/solving.md");
  EXPECT_EQ(DocBulletList(readme, "Algorithms:"), Names(Algorithms()));
  std::set<std::string> heuristics = DocBulletList(readme, "Heuristics:");
  std::set<std::string> presets = PresetNames();
  // The heuristics bullet also shows pdb's presets and a sample of groups.
  std::erase_if(heuristics,
                [&](const std::string& w) { return presets.contains(w) || w.find(',') != std::string::npos; });
  EXPECT_EQ(heuristics, Names(Heuristics()));
}

TEST(Registry, TheDocsAndProtoListEveryPatternPreset) {
  const std::string readme = ReadSource("docs/solving.md");
  const std::set<std::string> in_readme = DocBulletList(readme, "Heuristics:");
  const std::string proto = ReadSource("proto/npuzzle/v1/solver.proto");
  for (const std::string& preset : PresetNames()) {
    EXPECT_TRUE(in_readme.contains(preset)) << preset;
    EXPECT_THAT(proto, HasSubstr("\"" + preset + "\"")) << preset;
  }
}

TEST(Registry, NamesAreUniqueAndListedInHelpOrder) {
  EXPECT_EQ(Names(Algorithms()).size(), Algorithms().size());
  EXPECT_EQ(Names(Heuristics()).size(), Heuristics().size());
  for (const AlgorithmInfo& a : Algorithms()) EXPECT_THAT(AlgorithmNames(), HasSubstr(a.name));
  for (const HeuristicInfo& h : Heuristics()) EXPECT_THAT(HeuristicNames(), HasSubstr(h.name));
}

SolveRequest Request(absl::string_view algorithm, absl::string_view heuristic) {
  SolveRequest r;
  r.start = *GoalPreset("standard", 3, 3);
  r.goal = r.start;
  r.algorithm = std::string(algorithm);
  r.heuristic = std::string(heuristic);
  return r;
}

// A weight is accepted exactly by the algorithms that say they take one,
// and the error names those.
TEST(Registry, WeightOnlyWhereTheRegistrySaysSo) {
  for (const AlgorithmInfo& a : Algorithms()) {
    SolveRequest r = Request(a.name, "manhattan");
    r.weight = 1.5;
    const absl::Status s = ValidateSolveRequest(r);
    EXPECT_EQ(s.ok(), a.takes_weight) << a.name << ": " << s;
    if (!a.takes_weight) {
      EXPECT_THAT(s.message(), HasSubstr(std::string(a.name)));
    } else {
      r.weight = kMaxWeight * 2;
      EXPECT_THAT(ValidateSolveRequest(r).message(), HasSubstr("out of range"));
      r.weight = -1;
      EXPECT_THAT(ValidateSolveRequest(r).message(), HasSubstr("out of range"));
    }
  }
}

// Pattern groups are accepted exactly by heuristics that take them (and
// only under an algorithm that uses a heuristic), and are checked against
// the goal without building a table.
TEST(Registry, PatternGroupsOnlyWhereTheRegistrySaysSo) {
  for (const AlgorithmInfo& a : Algorithms()) {
    for (const HeuristicInfo& h : Heuristics()) {
      SolveRequest r = Request(a.name, h.name);
      r.heuristic_options.pdb_groups = "1,2,3,4/5,6,7,8";
      const absl::Status s = ValidateSolveRequest(r);
      // auto and anytime use the tables named once they are loaded,
      // whatever the heuristic field says.
      const bool accepted = (a.uses_heuristic && h.takes_pattern_groups) || a.portfolio;
      EXPECT_EQ(s.ok(), accepted) << a.name << " " << h.name << ": " << s;
      if (accepted) {
        r.heuristic_options.pdb_groups = "1,2,3,4/4,5,6,7,8";
        EXPECT_THAT(ValidateSolveRequest(r).message(), HasSubstr("disjoint"));
        r.heuristic_options.pdb_groups = "";
        r.heuristic_options.pdb_preset = "7-8";
        EXPECT_THAT(ValidateSolveRequest(r).message(), HasSubstr("4x4"));
      } else {
        EXPECT_THAT(s.message(), HasSubstr(a.uses_heuristic ? std::string(h.name) : std::string(a.name)));
      }
    }
  }
}

TEST(Registry, UnknownNamesListTheKnownOnes) {
  absl::Status s = ValidateSolveRequest(Request("bogo", "manhattan"));
  EXPECT_THAT(s.message(), HasSubstr("unknown algorithm 'bogo'"));
  EXPECT_THAT(s.message(), HasSubstr(AlgorithmNames()));
  s = ValidateSolveRequest(Request("astar", "euclid"));
  EXPECT_THAT(s.message(), HasSubstr("unknown heuristic 'euclid'"));
  EXPECT_THAT(s.message(), HasSubstr(HeuristicNames()));
  // Uninformed algorithms ignore the heuristic's name.
  EXPECT_TRUE(ValidateSolveRequest(Request("bfs", "euclid")).ok());
}

}  // namespace
}  // namespace npuzzle
