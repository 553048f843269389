// PdbStore: a process's pattern tables, by board shape, goal and group.
// The first request for a table maps it from the cache directory, or
// builds it (with progress reports, obeying the caller's cancellation,
// deadline and memory limit) and saves it there; later requests, from any
// thread, share the same table. A file lock keeps processes that share the
// directory from building the same table twice at once. The directory has a
// size budget: saving a table first evicts the least recently used tables
// that no process holds (in use, a table keeps a shared lock on its file).
#ifndef NPUZZLE_ENGINE_PDB_PDB_STORE_H_
#define NPUZZLE_ENGINE_PDB_PDB_STORE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "engine/heuristic_options.h"
#include "engine/pdb/pattern_table.h"

namespace npuzzle {

struct PdbBuildOptions {
  int threads = 0;  // 0: every core
  // Building and cache events, one line each (for people to read).
  std::function<void(absl::string_view)> on_message;
  // Cancellation, deadline, memory limit and the activity observer; a
  // caller waiting for another thread's build of the same table stops
  // waiting on its own cancellation or deadline too.
  HeuristicBuildLimits limits;
  uint64_t cache_budget_bytes = 0;  // 0: DefaultPdbCacheBytes()
  bool held_only = false;           // HeuristicOptions::pdb_held_only
};

class PdbStore {
 public:
  // `directory` empty: tables live in memory only.
  explicit PdbStore(std::string directory);

  // The store for a cache directory, shared by the whole process; empty
  // names DefaultPdbDirectory().
  static PdbStore& ForDirectory(const std::string& directory);

  // Errors: Cancelled or DeadlineExceeded as the limits say (no file is
  // left behind), ResourceExhausted when the build would pass the memory
  // limit, FailedPrecondition when the table cannot fit the cache budget,
  // NotFound when `held_only` and this process does not hold it.
  absl::StatusOr<std::shared_ptr<const PatternTable>> Table(const PatternKey& key, const PdbBuildOptions& options);

  // Loads the table from the cache directory on a thread of its own, if it
  // is built there and no thread of this process holds, loads or builds it
  // already; returns at once. The load outlives the caller, and later
  // callers find the table held; so it is only for a store that lives as
  // long as the process (ForDirectory's). Never builds: a missing or
  // damaged file is left for Table() to deal with.
  void LoadInBackground(const PatternKey& key);

  // Tables held now, and how many were built rather than loaded.
  int tables() const;
  int built() const;

 private:
  struct Entry {
    std::shared_ptr<const PatternTable> table;
    bool busy = false;  // a thread is loading or building it
  };

  // Waits until no other thread is loading or building the entry; then
  // returns its table, or nullptr having marked the entry busy for the
  // caller to fill.
  absl::StatusOr<std::shared_ptr<const PatternTable>> Claim(const std::string& name,
                                                            const HeuristicBuildLimits& limits);
  void Publish(const std::string& name, const absl::StatusOr<std::shared_ptr<const PatternTable>>& table);
  absl::StatusOr<std::shared_ptr<const PatternTable>> LoadOrBuild(const PatternKey& key,
                                                                  const PdbBuildOptions& options);
  absl::StatusOr<std::shared_ptr<PatternTable>> Build(const PatternKey& key, const PdbBuildOptions& options);
  // Deletes least recently used table files nobody holds until
  // `incoming` more bytes fit within `budget`.
  absl::Status MakeRoom(const std::string& keep, uint64_t incoming, uint64_t budget, const PdbBuildOptions& options);

  const std::string directory_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  int tables_ ABSL_GUARDED_BY(mu_) = 0;
  int built_ ABSL_GUARDED_BY(mu_) = 0;
};

// $NPUZZLE_DATA_DIR/pdb, else $XDG_CACHE_HOME/npuzzle/pdb, else
// ~/.cache/npuzzle/pdb, else /tmp/npuzzle/pdb.
std::string DefaultPdbDirectory();

// $NPUZZLE_PDB_CACHE_MB MiB when set, else kDefaultPdbCacheMb.
uint64_t DefaultPdbCacheBytes();

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_PDB_STORE_H_
