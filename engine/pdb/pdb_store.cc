#include "engine/pdb/pdb_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "engine/pdb/pattern_builder.h"
#include "engine/pdb/pattern_groups.h"

namespace npuzzle {
namespace {

void Say(const PdbBuildOptions& options, const std::string& message) {
  if (options.on_message) options.on_message(message);
}

// Holds an exclusive flock on `path` (created if needed) while alive; a
// no-op when the lock file cannot be made.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

std::string DefaultPdbDirectory() {
  if (const char* dir = std::getenv("NPUZZLE_DATA_DIR"); dir != nullptr && *dir != '\0') {
    return absl::StrCat(dir, "/pdb");
  }
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir != nullptr && *dir != '\0') {
    return absl::StrCat(dir, "/npuzzle/pdb");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return absl::StrCat(home, "/.cache/npuzzle/pdb");
  }
  return "/tmp/npuzzle/pdb";
}

PdbStore::PdbStore(std::string directory) : directory_(std::move(directory)) {}

PdbStore& PdbStore::ForDirectory(const std::string& directory) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* stores = new std::map<std::string, std::unique_ptr<PdbStore>>;
  const std::string dir = directory.empty() ? DefaultPdbDirectory() : directory;
  absl::MutexLock lock(&mu);
  std::unique_ptr<PdbStore>& store = (*stores)[dir];
  if (store == nullptr) store = std::make_unique<PdbStore>(dir);
  return *store;
}

int PdbStore::tables() const {
  absl::MutexLock lock(&mu_);
  return tables_;
}

int PdbStore::built() const {
  absl::MutexLock lock(&mu_);
  return built_;
}

absl::StatusOr<std::shared_ptr<const PatternTable>> PdbStore::Table(const PatternKey& key,
                                                                    const PdbBuildOptions& options) {
  Entry* entry;
  {
    absl::MutexLock lock(&mu_);
    std::unique_ptr<Entry>& e = entries_[key.FileName()];
    if (e == nullptr) e = std::make_unique<Entry>();
    entry = e.get();
  }
  // Other threads wanting this table wait here while it loads or builds.
  absl::MutexLock lock(&entry->mu);
  if (entry->table == nullptr) {
    absl::StatusOr<std::shared_ptr<const PatternTable>> table = LoadOrBuild(key, options);
    if (!table.ok()) return table.status();
    entry->table = *std::move(table);
    absl::MutexLock store_lock(&mu_);
    ++tables_;
  }
  return entry->table;
}

absl::StatusOr<std::shared_ptr<const PatternTable>> PdbStore::LoadOrBuild(const PatternKey& key,
                                                                          const PdbBuildOptions& options) {
  std::string path;
  std::unique_ptr<FileLock> lock;
  if (!directory_.empty()) {
    std::error_code error;
    std::filesystem::create_directories(directory_, error);
    if (error) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create the pattern database directory ", directory_, ": ", error.message()));
    }
    path = absl::StrCat(directory_, "/", key.FileName());
    lock = std::make_unique<FileLock>(path + ".lock");
    const absl::Time start = absl::Now();
    absl::StatusOr<std::shared_ptr<const PatternTable>> loaded = PatternTable::Load(path, key);
    if (loaded.ok()) {
      Say(options, absl::StrFormat("loaded pattern table %s (%d entries) in %.0f ms", key.Describe(),
                                   (*loaded)->size(), absl::ToDoubleMilliseconds(absl::Now() - start)));
      return loaded;
    }
    if (!absl::IsNotFound(loaded.status())) {
      Say(options, absl::StrCat(loaded.status().message(), "; rebuilding it"));
    }
  }

  PatternBuildOptions build;
  build.threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  build.on_layer = [&](const PatternBuildProgress& p) {
    Say(options, absl::StrFormat("building pattern table %s: distance %d, %d abstract states expanded, %.1f s",
                                 key.Describe(), p.depth, p.expanded, absl::ToDoubleSeconds(p.elapsed)));
  };
  const absl::Time start = absl::Now();
  std::shared_ptr<const PatternTable> table =
      PatternTable::FromBytes(BuildPatternDistances(key.goal, key.group, build));
  Say(options, absl::StrFormat("built pattern table %s: %d entries in %.1f s", key.Describe(), table->size(),
                               absl::ToDoubleSeconds(absl::Now() - start)));
  {
    absl::MutexLock count(&mu_);
    ++built_;
  }
  if (path.empty()) return table;
  if (absl::Status saved = table->Save(path, key); !saved.ok()) {
    Say(options, absl::StrCat(saved.message(), "; keeping the table in memory only"));
    return table;
  }
  // Map the saved file, so processes sharing the directory share the pages.
  absl::StatusOr<std::shared_ptr<const PatternTable>> mapped = PatternTable::Load(path, key);
  return mapped.ok() ? *mapped : table;
}

}  // namespace npuzzle
