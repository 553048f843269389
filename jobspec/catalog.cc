#include "jobspec/catalog.h"

#include "engine/board.h"
#include "engine/goals.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/registry.h"
#include "nlohmann/json.hpp"

namespace npuzzle {

std::string CatalogJson() {
  nlohmann::json catalog;
  nlohmann::json& algorithms = catalog["algorithms"] = nlohmann::json::array();
  for (const AlgorithmInfo& a : Algorithms()) {
    algorithms.push_back({{"name", std::string(a.name)},
                          {"summary", std::string(a.summary)},
                          {"usesHeuristic", a.uses_heuristic},
                          {"optimal", a.optimality != Optimality::kNever},
                          {"takesWeight", a.takes_weight}});
  }
  nlohmann::json& heuristics = catalog["heuristics"] = nlohmann::json::array();
  for (const HeuristicInfo& h : Heuristics()) {
    heuristics.push_back({{"name", std::string(h.name)},
                          {"summary", std::string(h.summary)},
                          {"admissible", h.admissible},
                          {"takesPatternGroups", h.takes_pattern_groups}});
  }
  catalog["goalPresets"] = GoalPresetNames();
  nlohmann::json& goals = catalog["goals"] = nlohmann::json::object();
  // Every shape any algorithm takes (the anytime solver's, up to 16x16):
  // about 200 KB of goals, which the page needs to draw and shuffle them.
  catalog["maxSide"] = kMaxBoardSide;
  for (int rows = kMinSide; rows <= kMaxBoardSide; ++rows) {
    for (int cols = kMinSide; cols <= kMaxBoardSide; ++cols) {
      nlohmann::json& shape = goals[std::to_string(rows) + "x" + std::to_string(cols)];
      for (const std::string& preset : GoalPresetNames()) {
        if (absl::StatusOr<Board> goal = GoalPreset(preset, rows, cols); goal.ok()) {
          shape[preset] = goal->tiles();
        }
      }
    }
  }
  catalog["pdbPresets"] = PatternPresetNames();
  return catalog.dump();
}

}  // namespace npuzzle
