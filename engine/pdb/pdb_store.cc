#include "engine/pdb/pdb_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "engine/pdb/pattern_builder.h"
#include "engine/pdb/pattern_groups.h"

namespace npuzzle {
namespace {

// How often a thread waiting for someone else's build looks at its own
// cancellation and deadline.
constexpr absl::Duration kWaitPoll = absl::Milliseconds(20);

void Say(const PdbBuildOptions& options, const std::string& message) {
  if (options.on_message) options.on_message(message);
}

uint64_t MiB(uint64_t bytes) { return (bytes + (1 << 20) - 1) >> 20; }

// A table used without its file gets its cell layout here; one read back
// from its file gets it from Load, so a build makes the layout once.
std::shared_ptr<const PatternTable> KeptInMemory(std::shared_ptr<PatternTable> table, const PatternKey& key) {
  table->AddCellIndex(key);
  return table;
}

// Why the caller must stop now, if it must.
absl::Status Stopped(const HeuristicBuildLimits& limits, absl::string_view doing) {
  if (limits.cancel != nullptr && limits.cancel->cancelled()) {
    return absl::CancelledError(absl::StrCat("cancelled while ", doing));
  }
  if (absl::Now() >= limits.deadline) {
    return absl::DeadlineExceededError(absl::StrCat("the time limit ran out while ", doing));
  }
  return absl::OkStatus();
}

// An exclusive flock on `path` (created if needed), held while alive:
// processes sharing a cache directory take turns building a table. Taking
// it gives up when the caller is cancelled or out of time.
class BuildLock {
 public:
  static absl::StatusOr<std::unique_ptr<BuildLock>> Take(const std::string& path, const HeuristicBuildLimits& limits) {
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    auto lock = std::unique_ptr<BuildLock>(new BuildLock(fd));
    if (fd < 0) return lock;  // an unwritable directory is reported when saving
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (absl::Status s = Stopped(limits, "waiting for another process's pattern table build"); !s.ok()) {
        return s;
      }
      absl::SleepFor(kWaitPoll);
    }
    return lock;
  }
  ~BuildLock() {
    if (fd_ >= 0) close(fd_);  // closing releases the lock
  }
  BuildLock(const BuildLock&) = delete;
  BuildLock& operator=(const BuildLock&) = delete;

 private:
  explicit BuildLock(int fd) : fd_(fd) {}
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

uint64_t DefaultPdbCacheBytes() {
  uint64_t mb = kDefaultPdbCacheMb;
  if (const char* v = std::getenv("NPUZZLE_PDB_CACHE_MB"); v != nullptr && *v != '\0') {
    uint64_t parsed;
    if (absl::SimpleAtoi(v, &parsed) && parsed > 0 && parsed < (uint64_t{1} << 40)) mb = parsed;
  }
  return mb << 20;
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
  const std::string name = key.FileName();
  if (options.held_only) {
    absl::MutexLock lock(&mu_);
    const auto it = entries_.find(name);
    if (it != entries_.end() && it->second.table != nullptr) return it->second.table;
    return absl::NotFoundError(absl::StrCat("the pattern table ", key.Describe(), " is not loaded"));
  }
  absl::StatusOr<std::shared_ptr<const PatternTable>> claimed = Claim(name, options.limits);
  if (!claimed.ok() || *claimed != nullptr) return claimed;
  absl::StatusOr<std::shared_ptr<const PatternTable>> table = LoadOrBuild(key, options);
  Publish(name, table);
  return table;
}

void PdbStore::LoadInBackground(const PatternKey& key) {
  if (directory_.empty()) return;
  const std::string name = key.FileName();
  const std::string path = absl::StrCat(directory_, "/", name);
  if (access(path.c_str(), R_OK) != 0) return;  // not built
  {
    absl::MutexLock lock(&mu_);
    Entry& entry = entries_[name];
    if (entry.busy || entry.table != nullptr) return;
    entry.busy = true;
  }
  // Without the build lock: a saved table appears whole (it is renamed into
  // place), and Load checks the file through.
  std::thread([this, key, name, path] { Publish(name, PatternTable::Load(path, key)); }).detach();
}

absl::StatusOr<std::shared_ptr<const PatternTable>> PdbStore::Claim(const std::string& name,
                                                                    const HeuristicBuildLimits& limits) {
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[name];
  const auto idle = [](Entry* e) { return !e->busy; };
  while (!mu_.AwaitWithTimeout(absl::Condition(+idle, &entry), kWaitPoll)) {
    if (absl::Status s = Stopped(limits, "waiting for another job's pattern table build"); !s.ok()) return s;
  }
  if (entry.table != nullptr) return entry.table;
  entry.busy = true;
  return nullptr;
}

void PdbStore::Publish(const std::string& name, const absl::StatusOr<std::shared_ptr<const PatternTable>>& table) {
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[name];
  entry.busy = false;
  if (table.ok()) {
    entry.table = *table;
    ++tables_;
  }
}

absl::StatusOr<std::shared_ptr<const PatternTable>> PdbStore::LoadOrBuild(const PatternKey& key,
                                                                          const PdbBuildOptions& options) {
  if (directory_.empty()) {
    absl::StatusOr<std::shared_ptr<PatternTable>> built = Build(key, options);
    if (!built.ok()) return built.status();
    return KeptInMemory(*std::move(built), key);
  }
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create the pattern database directory ", directory_, ": ", error.message()));
  }
  const std::string path = absl::StrCat(directory_, "/", key.FileName());
  absl::StatusOr<std::unique_ptr<BuildLock>> lock = BuildLock::Take(path + ".lock", options.limits);
  if (!lock.ok()) return lock.status();
  const absl::Time start = absl::Now();
  absl::StatusOr<std::shared_ptr<const PatternTable>> loaded = PatternTable::Load(path, key);
  if (loaded.ok()) {
    Say(options, absl::StrFormat("loaded pattern table %s (%d entries) in %.0f ms", key.Describe(), (*loaded)->size(),
                                 absl::ToDoubleMilliseconds(absl::Now() - start)));
    return loaded;
  }
  if (!absl::IsNotFound(loaded.status())) Say(options, absl::StrCat(loaded.status().message(), "; rebuilding it"));

  const uint64_t budget = options.cache_budget_bytes != 0 ? options.cache_budget_bytes : DefaultPdbCacheBytes();
  const uint64_t file_bytes = PatternTable::FileBytes(key);
  if (file_bytes > budget) {
    return absl::FailedPreconditionError(
        absl::StrFormat("pattern table for tiles %s takes %d MiB on disk, more than the table cache budget of %d MiB "
                        "(--pdb-cache-mb, NPUZZLE_PDB_CACHE_MB)",
                        absl::StrJoin(key.group, ","), MiB(file_bytes), MiB(budget)));
  }
  absl::StatusOr<std::shared_ptr<PatternTable>> built = Build(key, options);
  if (!built.ok()) return built.status();
  if (absl::Status room = MakeRoom(path, file_bytes, budget, options); !room.ok()) {
    Say(options, absl::StrCat(room.message(), "; keeping the table in memory only"));
    return KeptInMemory(*std::move(built), key);
  }
  if (absl::Status saved = (*built)->Save(path, key); !saved.ok()) {
    Say(options, absl::StrCat(saved.message(), "; keeping the table in memory only"));
    return KeptInMemory(*std::move(built), key);
  }
  // Read back what was saved: the table in use then holds its file's shared
  // lock (eviction passes over it) and is exactly what others will read.
  absl::StatusOr<std::shared_ptr<const PatternTable>> saved_table = PatternTable::Load(path, key);
  return saved_table.ok() ? *saved_table : KeptInMemory(*std::move(built), key);
}

absl::StatusOr<std::shared_ptr<PatternTable>> PdbStore::Build(const PatternKey& key, const PdbBuildOptions& options) {
  const HeuristicBuildLimits& limits = options.limits;
  const std::string tiles = absl::StrJoin(key.group, ",");
  const uint64_t needs = PatternBuildBytes(key.goal.cells(), static_cast<int>(key.group.size()), key.blank_aware);
  if (limits.max_memory_bytes != 0 && needs > limits.max_memory_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("building the pattern table for tiles %s needs %d MiB, more than the memory limit of %d MiB",
                        tiles, MiB(needs), MiB(limits.max_memory_bytes)));
  }
  PatternBuildOptions build;
  build.threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  build.cancel = limits.cancel;
  build.deadline = limits.deadline;
  build.max_memory_bytes = limits.max_memory_bytes;
  build.blank_aware = key.blank_aware;
  build.progress_interval = limits.activity_interval;
  int reported_depth = -1;
  build.on_progress = [&](const PatternBuildProgress& p) {
    if (limits.on_activity) {
      limits.on_activity(absl::StrFormat("building pattern table for tiles %s (%s): layer %d, %.0f%%, %.1f s", tiles,
                                         key.goal.Dimensions(), p.depth, 100 * p.layer_done,
                                         absl::ToDoubleSeconds(p.elapsed)));
    }
    if (p.layer_done == 1.0 && p.depth != reported_depth) {
      reported_depth = p.depth;
      Say(options, absl::StrFormat("building pattern table %s: distance %d, %d abstract states expanded, %.1f s",
                                   key.Describe(), p.depth, p.expanded, absl::ToDoubleSeconds(p.elapsed)));
    }
  };
  const absl::Time start = absl::Now();
  absl::StatusOr<AnonymousMemory> distances = BuildPatternDistances(key.goal, key.group, build);
  if (!distances.ok()) return distances.status();
  std::shared_ptr<PatternTable> table = PatternTable::FromMemory(*std::move(distances), key);
  Say(options, absl::StrFormat("built pattern table %s: %d entries in %.1f s", key.Describe(), table->size(),
                               absl::ToDoubleSeconds(absl::Now() - start)));
  absl::MutexLock count(&mu_);
  ++built_;
  return table;
}

absl::Status PdbStore::MakeRoom(const std::string& keep, uint64_t incoming, uint64_t budget,
                                const PdbBuildOptions& options) {
  struct Cached {
    std::string path;
    uint64_t bytes;
    struct timespec used;
  };
  std::vector<Cached> cached;
  uint64_t total = 0;
  std::error_code error;
  for (const auto& file : std::filesystem::directory_iterator(directory_, error)) {
    const std::string path = file.path().string();
    const std::string name = file.path().filename().string();
    if (path == keep || !absl::StartsWith(name, "pdb-") || !absl::EndsWith(name, ".bin")) continue;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) continue;
    cached.push_back({path, static_cast<uint64_t>(st.st_size), st.st_mtim});
    total += st.st_size;
  }
  std::sort(cached.begin(), cached.end(), [](const Cached& a, const Cached& b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec : a.used.tv_nsec < b.used.tv_nsec;
  });
  for (const Cached& c : cached) {
    if (total + incoming <= budget) break;
    const int fd = open(c.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    // A table some process uses holds a shared lock: pass it over.
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && unlink(c.path.c_str()) == 0) {
      total -= c.bytes;
      Say(options, absl::StrFormat("evicted pattern table %s (%d MiB) to stay within the %d MiB cache budget", c.path,
                                   MiB(c.bytes), MiB(budget)));
    }
    close(fd);
  }
  if (total + incoming > budget) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "the pattern table cache %s cannot take %d MiB more within its %d MiB budget: the tables in it are in use",
        directory_, MiB(incoming), MiB(budget)));
  }
  return absl::OkStatus();
}

}  // namespace npuzzle
