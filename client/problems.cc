#include "client/problems.h"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/request_flags.h"
#include "engine/board_parser.h"

ABSL_DECLARE_FLAG(std::string, board);
ABSL_FLAG(std::string, file, "", "file of problems, or - for stdin");

namespace npuzzle {
namespace {

absl::StatusOr<Problem> ProblemFor(absl::string_view start_text, const absl::string_view* goal_text, int line) {
  Problem p;
  p.line = line;
  absl::StatusOr<Board> start = ParseBoardWithFlags(start_text);
  if (!start.ok()) return start.status();
  p.start = *std::move(start);
  absl::StatusOr<Board> goal = goal_text != nullptr ? ParseBoard(*goal_text, p.start.rows(), p.start.cols())
                                                    : GoalFromFlags(p.start.rows(), p.start.cols());
  if (!goal.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("goal: ", goal.status().message()));
  }
  p.goal = *std::move(goal);
  return p;
}

absl::StatusOr<std::vector<Problem>> ParseProblemText(const std::string& text) {
  std::vector<std::pair<int, absl::string_view>> lines;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line[0] != '#') lines.emplace_back(number, line);
  }
  const bool pairs = !GoalFlagGiven();
  if (pairs && lines.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected pairs of lines (start, then goal) but found ", lines.size(),
                     " board lines; give --goal or --goal-preset to read one start board per line"));
  }
  std::vector<Problem> problems;
  std::vector<std::string> errors;
  for (size_t i = 0; i < lines.size(); i += pairs ? 2 : 1) {
    absl::StatusOr<Problem> p = ProblemFor(lines[i].second, pairs ? &lines[i + 1].second : nullptr, lines[i].first);
    if (p.ok()) {
      problems.push_back(*std::move(p));
    } else {
      errors.push_back(absl::StrCat("line ", lines[i].first, ": ", p.status().message()));
    }
  }
  if (!errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  if (problems.empty()) return absl::InvalidArgumentError("no problems in the input");
  return problems;
}

}  // namespace

absl::StatusOr<std::vector<Problem>> ProblemsFromFlags() {
  const std::string board = absl::GetFlag(FLAGS_board);
  std::string file = absl::GetFlag(FLAGS_file);
  if (!board.empty() && !file.empty()) {
    return absl::InvalidArgumentError("give either --board or --file, not both");
  }
  if (!board.empty()) {
    absl::StatusOr<Problem> p = ProblemFor(board, nullptr, 0);
    if (!p.ok()) return p.status();
    return std::vector<Problem>{*std::move(p)};
  }
  if (file.empty()) {
    if (isatty(STDIN_FILENO)) {
      return absl::InvalidArgumentError("no problem given: use --board, --file, or pipe problems in");
    }
    file = "-";
  }
  std::stringstream text;
  if (file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", file));
    text << in.rdbuf();
  }
  return ParseProblemText(text.str());
}

}  // namespace npuzzle
