// PdbStore: a process's pattern tables, by board shape, goal and group.
// The first request for a table maps it from the cache directory, or
// builds it (with progress messages) and saves it there; later requests,
// from any thread, share the same table. A file lock keeps processes that
// share the directory from building the same table twice at once.
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
#include "engine/pdb/pattern_table.h"

namespace npuzzle {

struct PdbBuildOptions {
  int threads = 0;  // 0: every core
  // Building and cache events, one line each (for people to read).
  std::function<void(absl::string_view)> on_message;
};

class PdbStore {
 public:
  // `directory` empty: tables live in memory only.
  explicit PdbStore(std::string directory);

  // The store for a cache directory, shared by the whole process; empty
  // names DefaultPdbDirectory().
  static PdbStore& ForDirectory(const std::string& directory);

  absl::StatusOr<std::shared_ptr<const PatternTable>> Table(const PatternKey& key,
                                                            const PdbBuildOptions& options);

  const std::string& directory() const { return directory_; }
  // Tables held now, and how many were built rather than loaded.
  int tables() const;
  int built() const;

 private:
  struct Entry {
    absl::Mutex mu;
    std::shared_ptr<const PatternTable> table ABSL_GUARDED_BY(mu);
  };

  absl::StatusOr<std::shared_ptr<const PatternTable>> LoadOrBuild(const PatternKey& key,
                                                                  const PdbBuildOptions& options);

  const std::string directory_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  // Counted apart from `entries_`, whose locks are held while building.
  int tables_ ABSL_GUARDED_BY(mu_) = 0;
  int built_ ABSL_GUARDED_BY(mu_) = 0;
};

// $NPUZZLE_DATA_DIR/pdb, else $XDG_CACHE_HOME/npuzzle/pdb, else
// ~/.cache/npuzzle/pdb, else /tmp/npuzzle/pdb.
std::string DefaultPdbDirectory();

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_PDB_STORE_H_
