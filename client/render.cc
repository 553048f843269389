#include "client/render.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/moves.h"
#include "engine/puzzle.h"

namespace npuzzle {
namespace {

// 1234567 -> "1.23M"
std::string Compact(double n) {
  if (n >= 1e9) return absl::StrFormat("%.2fG", n / 1e9);
  if (n >= 1e6) return absl::StrFormat("%.2fM", n / 1e6);
  if (n >= 1e4) return absl::StrFormat("%.1fk", n / 1e3);
  return absl::StrFormat("%.0f", n);
}

std::string Duration(absl::Duration d) {
  const double ms = absl::ToDoubleMilliseconds(d);
  return ms < 1000 ? absl::StrFormat("%.3f ms", ms) : absl::StrFormat("%.2f s", ms / 1000);
}

// An estimate's precision: "40 s", "12 min", "3.5 h".
std::string Rough(absl::Duration d) {
  const double s = absl::ToDoubleSeconds(d);
  if (s < 90) return absl::StrFormat("%.0f s", s);
  if (s < 90 * 60) return absl::StrFormat("%.0f min", s / 60);
  return absl::StrFormat("%.1f h", s / 3600);
}

// Two grids side by side under their titles.
std::string SideBySide(const std::string& left_title, const Board& left, const std::string& right_title,
                       const Board& right) {
  std::vector<std::string> a = absl::StrSplit(left.ToGrid(), '\n', absl::SkipEmpty());
  std::vector<std::string> b = absl::StrSplit(right.ToGrid(), '\n', absl::SkipEmpty());
  size_t width = left_title.size();
  for (const std::string& line : a) width = std::max(width, line.size());
  width += 4;
  std::string out = absl::StrFormat("%-*s%s\n", width, left_title, right_title);
  for (size_t i = 0; i < a.size(); ++i) {
    absl::StrAppend(&out, absl::StrFormat("%-*s%s\n", width, a[i], b[i]));
  }
  return out;
}

}  // namespace

std::string RenderHuman(const Board& start, const Board& goal, const SolveResult& result, bool show_steps) {
  std::string out = SideBySide(absl::StrCat("start (", start.Dimensions(), ")"), start, "goal", goal);
  const SearchStats& s = result.stats;
  const std::string how = absl::StrCat(result.algorithm, result.heuristic == "none" ? "" : " + ",
                                       result.heuristic == "none" ? "" : result.heuristic);
  switch (result.status) {
    case SearchStatus::kSolved:
      absl::StrAppend(&out, absl::StrFormat("solved in %d moves%s with %s\n", result.moves.size(),
                                            result.optimal ? " (optimal)" : " (not proven optimal)", how));
      if (!result.optimal && result.lower_bound > 0) {
        absl::StrAppend(&out, absl::StrFormat("lower bound %d: at most %.3fx the shortest\n", result.lower_bound,
                                              static_cast<double>(result.moves.size()) / result.lower_bound));
      }
      absl::StrAppend(&out, "moves (blank): ", MovesToString(result.moves), "\n");
      absl::StrAppend(&out, "tiles moved:   ", absl::StrJoin(result.tile_moves, " "), "\n");
      break;
    case SearchStatus::kUnsolvable:
      absl::StrAppend(&out, "unsolvable: the start cannot reach this goal (parity)\n");
      return out;
    case SearchStatus::kNodeLimit:
      absl::StrAppend(&out, absl::StrFormat("no answer within %d state expansions (%s)\n", s.expanded, how));
      break;
    default:
      absl::StrAppend(&out, "no answer: stopped by ", StatusName(result.status), " (", how, ")\n");
  }
  absl::StrAppend(&out, absl::StrFormat("expanded %d, generated %d, duplicates %d, max open %d, iterations %d, "
                                        "h(start) %d, %s, %s nodes/s\n",
                                        s.expanded, s.generated, s.duplicates, s.max_open, s.iterations, s.start_h,
                                        Duration(s.elapsed), Compact(s.nodes_per_second)));
  if (!result.chosen.empty()) absl::StrAppend(&out, "chose ", result.chosen, "; stopped: ", result.stopped_by, "\n");
  if (show_steps && result.status == SearchStatus::kSolved) {
    Board board = start;
    for (size_t i = 0; i < result.moves.size(); ++i) {
      board = *ApplyMoves(board, {result.moves[i]});
      absl::StrAppend(&out, absl::StrFormat("\nstep %d: %c (tile %d)\n%s", i + 1, DirLetter(result.moves[i]),
                                            result.tile_moves[i], board.ToGrid()));
    }
  }
  return out;
}

nlohmann::json ResultToJson(const Board& start, const Board& goal, const SolveResult& result) {
  const SearchStats& s = result.stats;
  nlohmann::json j;
  j["status"] = std::string(StatusName(result.status));
  j["rows"] = start.rows();
  j["cols"] = start.cols();
  j["start"] = start.ToString();
  j["goal"] = goal.ToString();
  j["moves"] = MovesToString(result.moves);
  j["tile_moves"] = result.tile_moves;
  j["length"] = result.moves.size();
  j["optimal"] = result.optimal;
  j["algorithm"] = result.algorithm;
  j["heuristic"] = result.heuristic;
  j["lower_bound"] = result.lower_bound;
  if (!result.chosen.empty()) {
    j["chosen"] = result.chosen;
    j["stopped_by"] = result.stopped_by;
  }
  j["expanded"] = s.expanded;
  j["generated"] = s.generated;
  j["duplicates"] = s.duplicates;
  j["max_open"] = s.max_open;
  j["iterations"] = s.iterations;
  j["start_h"] = s.start_h;
  j["elapsed_ms"] = absl::ToDoubleMilliseconds(s.elapsed);
  j["nodes_per_second"] = s.nodes_per_second;
  return j;
}

std::string RenderProgress(const Progress& p) {
  if (!p.activity.empty()) return p.activity;
  std::string line;
  if (p.best_length > 0) {
    line = absl::StrFormat("best %d moves, lower bound %d (gap %.3f), %s expanded, %s/s, %s", p.best_length,
                           p.lower_bound, static_cast<double>(p.best_length) / std::max(1, p.lower_bound),
                           Compact(p.expanded), Compact(p.nodes_per_second), Duration(p.elapsed));
  } else {
    line = absl::StrFormat("%s expanded, %s generated, %s/s, bound %d, best h %d, open %s, %s", Compact(p.expanded),
                           Compact(p.generated), Compact(p.nodes_per_second), p.bound, p.best_h, Compact(p.open_size),
                           Duration(p.elapsed));
  }
  return line + RenderEstimate(p);
}

std::string RenderEstimate(const Progress& p) {
  std::string estimate;
  if (p.fraction_done) {
    // IDA*'s estimate is of its threshold; the others' of the whole run.
    absl::StrAppend(&estimate, absl::StrFormat(", ~%.0f%%", 100 * *p.fraction_done),
                    p.best_length == 0 && p.bound > 0 ? absl::StrCat(" of bound ", p.bound) : "");
  }
  if (p.time_left) absl::StrAppend(&estimate, ", ~", Rough(*p.time_left), " left");
  return estimate;
}

}  // namespace npuzzle
