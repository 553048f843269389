#include "client/request.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/board_parser.h"
#include "engine/goals.h"
#include "engine/limits.h"

namespace npuzzle {
namespace {

absl::StatusOr<Problem> ProblemFor(const Invocation& in, absl::string_view start_text,
                                   const absl::string_view* goal_text, int line) {
  Problem p;
  p.line = line;
  absl::StatusOr<Board> start = ParseBoard(start_text, in.rows, in.cols);
  if (!start.ok()) return start.status();
  p.start = *std::move(start);
  absl::StatusOr<Board> goal = goal_text != nullptr ? ParseBoard(*goal_text, p.start.rows(), p.start.cols())
                                                    : GoalOf(in, p.start.rows(), p.start.cols());
  if (!goal.ok()) return absl::InvalidArgumentError(absl::StrCat("goal: ", goal.status().message()));
  p.goal = *std::move(goal);
  return p;
}

absl::StatusOr<std::vector<Problem>> ParseProblemText(const Invocation& in, const std::string& text) {
  std::vector<std::pair<int, absl::string_view>> lines;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line[0] != '#') lines.emplace_back(number, line);
  }
  if (in.pairs && (!in.goal.empty() || !in.goal_preset.empty())) {
    return absl::InvalidArgumentError("--pairs reads each goal from the file: give no --goal or --goal-preset");
  }
  if (in.pairs && lines.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pairs: expected pairs of lines (start, then goal) but found ", lines.size(), " board lines"));
  }
  std::vector<Problem> problems;
  std::vector<std::string> errors;
  for (size_t i = 0; i < lines.size(); i += in.pairs ? 2 : 1) {
    absl::StatusOr<Problem> p =
        ProblemFor(in, lines[i].second, in.pairs ? &lines[i + 1].second : nullptr, lines[i].first);
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

absl::StatusOr<Board> GoalOf(const Invocation& in, int rows, int cols) {
  if (!in.goal.empty() && !in.goal_preset.empty()) {
    return absl::InvalidArgumentError("give either --goal or --goal-preset, not both");
  }
  if (!in.goal.empty()) {
    absl::StatusOr<Board> board = ParseBoard(in.goal, rows, cols);
    if (!board.ok()) return absl::InvalidArgumentError(absl::StrCat("goal: ", board.status().message()));
    return board;
  }
  return GoalPreset(in.goal_preset.empty() ? "standard" : in.goal_preset, rows, cols);
}

absl::StatusOr<std::vector<Problem>> ProblemsOf(const Invocation& in) {
  if (!in.board.empty() && !in.file.empty())
    return absl::InvalidArgumentError("give either --board or --file, not both");
  if (!in.board.empty()) {
    if (in.pairs) return absl::InvalidArgumentError("--pairs reads a file: give --file, not --board");
    absl::StatusOr<Problem> p = ProblemFor(in, in.board, nullptr, 0);
    if (!p.ok()) return p.status();
    return std::vector<Problem>{*std::move(p)};
  }
  std::string file = in.file;
  if (file.empty()) {
    if (isatty(STDIN_FILENO))
      return absl::InvalidArgumentError("no problem given: use --board, --file, or pipe boards in");
    file = "-";
  }
  std::stringstream text;
  if (file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream stream(file);
    if (!stream) return absl::NotFoundError(absl::StrCat("cannot read ", file));
    text << stream.rdbuf();
  }
  return ParseProblemText(in, text.str());
}

absl::StatusOr<SolveRequest> RequestOf(const Invocation& in, RequestFor where) {
  SolveRequest request;
  request.algorithm = in.algorithm;
  request.heuristic = in.heuristic;
  request.weight = in.weight;
  request.max_gap = in.max_gap;
  request.options.seed = in.seed;
  LimitUnits units{in.max_nodes, in.max_time_ms, in.max_memory_mb.value_or(0), in.max_depth};
  if (where == RequestFor::kLocal) {
    units.max_memory_mb = in.max_memory_mb.value_or(DefaultLocalMemoryMb());
    const uint64_t machine = PhysicalMemoryMb();
    if (units.max_memory_mb == 0 || units.max_memory_mb > machine) {
      return absl::InvalidArgumentError(absl::StrCat("--max-memory-mb ", units.max_memory_mb,
                                                     " is out of range for a local solve: 1 to ", machine,
                                                     " (this machine's memory)"));
    }
  }
  absl::StatusOr<SearchLimits> limits = ConvertLimits(units, LimitNames::kFlags);
  if (!limits.ok()) return limits.status();
  request.options.limits = *limits;
  // The server decides how many threads a job gets unless asked.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  request.options.threads = in.threads > 0 ? in.threads : (where == RequestFor::kLocal ? cores : 0);
  HeuristicOptions& h = request.heuristic_options;
  h.pdb_preset = in.pdb_preset;
  h.pdb_groups = in.pdb_groups;
  h.pdb_mirror = in.pdb_mirror;
  h.pdb_zero_aware = in.pdb_zero_aware;
  h.pdb_cache_bytes = in.pdb_cache_mb << 20;
  if (!in.data_dir.empty()) h.pdb_dir = in.data_dir + "/pdb";
  h.on_message = [](absl::string_view message) { std::cerr << "npuzzle: " << message << "\n"; };
  return request;
}

}  // namespace npuzzle
