// Settings for heuristics that need more than the puzzle: today the
// pattern databases (which groups, where their tables are cached), and the
// limits and observers a table build must obey, which the solver fills in
// from the search's own.
#ifndef NPUZZLE_ENGINE_HEURISTIC_OPTIONS_H_
#define NPUZZLE_ENGINE_HEURISTIC_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/search.h"

namespace npuzzle {

// What bounds building a heuristic (its tables) inside one solve.
struct HeuristicBuildLimits {
  const CancelToken* cancel = nullptr;
  absl::Time deadline = absl::InfiniteFuture();
  uint64_t max_memory_bytes = 0;  // 0: none
  // What the build is doing, for people watching ("building pattern table
  // ...: layer 12, 40%"), at most once per `activity_interval`.
  std::function<void(absl::string_view)> on_activity;
  absl::Duration activity_interval = absl::Milliseconds(250);
};

// The default budget of the on-disk table cache, in MiB, when neither a
// flag nor $NPUZZLE_PDB_CACHE_MB sets one.
inline constexpr uint64_t kDefaultPdbCacheMb = 4096;

struct HeuristicOptions {
  std::string pdb_preset;  // "7-8", "6-6-3", ...; empty: the board's default
  std::string pdb_groups;  // "1,2,3/4,5,6"; instead of a preset
  std::string pdb_dir;     // table cache; empty: DefaultPdbDirectory()
  // The cache's size budget; least recently used tables that no process
  // holds are evicted to stay within it. 0: DefaultPdbCacheBytes().
  uint64_t pdb_cache_bytes = 0;
  bool pdb_mirror = true;  // also look up the transposed board when valid
  // Tables that also count the blank's region (engine/pdb/blank_extras.h):
  // stronger, and about five times the memory and cache space.
  bool pdb_zero_aware = false;
  int pdb_build_threads = 0;  // 0: every core
  // Only tables this process holds already: a missing one is NotFound at
  // once, and nothing is loaded or built. For callers that may use tables
  // but cannot wait seconds to load them, or minutes to build them
  // (engine/anytime/; PatternDatabase::LoadInBackground gets them held).
  bool pdb_held_only = false;
  // Table building and loading news, one line each.
  std::function<void(absl::string_view)> on_message;
  HeuristicBuildLimits build_limits;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTIC_OPTIONS_H_
