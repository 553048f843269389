// Settings for heuristics that need more than the puzzle: today the
// pattern databases (which groups, where their tables are cached).
#ifndef NPUZZLE_ENGINE_HEURISTIC_OPTIONS_H_
#define NPUZZLE_ENGINE_HEURISTIC_OPTIONS_H_

#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace npuzzle {

struct HeuristicOptions {
  std::string pdb_preset;  // "7-8", "6-6-3", ...; empty: the board's default
  std::string pdb_groups;  // "1,2,3/4,5,6"; instead of a preset
  std::string pdb_dir;     // table cache; empty: DefaultPdbDirectory()
  bool pdb_mirror = true;  // also look up the transposed board when valid
  int pdb_build_threads = 0;  // 0: every core
  // Table building and loading news, one line each.
  std::function<void(absl::string_view)> on_message;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTIC_OPTIONS_H_
