// PatternTable: one group's distances, either just built or read from its
// cache file. Read, not mapped: a cache file truncated or replaced under a
// mapping would kill the process with SIGBUS. The file carries a header
// naming the board shape, goal and group plus a CRC32 of the data; a file
// that does not match in every respect is reported and never used. While a
// table read from a file is in use, the file is held with a shared flock,
// which the cache's eviction respects. Where engine/pdb/cell_index.h says
// so, a table's distances are laid out by cells for lookups, and the dense
// layout is then let go: keeping both cost a 24-puzzle worker a third of
// its memory (510 MiB of 1.5 GiB with 6-6-6-6).
#ifndef NPUZZLE_ENGINE_PDB_PATTERN_TABLE_H_
#define NPUZZLE_ENGINE_PDB_PATTERN_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/board.h"
#include "engine/pdb/anonymous_memory.h"
#include "engine/pdb/placement.h"

namespace npuzzle {

// What a table is for: the board shape and goal, the group's tiles, and
// whether it keeps the blank's extras (blank_extras.h).
struct PatternKey {
  Board goal;
  std::vector<int> group;  // ascending
  bool blank_aware = false;

  // "pdb-4x4-<goal hash>-<group>.bin", "...-zero.bin" if blank-aware:
  // readable, and distinct for distinct keys up to a hash collision, which
  // the header check catches.
  std::string FileName() const;
  std::string Describe() const;  // "4x4 goal 0 1 2 ... tiles 1,2,3[ zero-aware]"
  // The bytes of the table's data: its entries, then any extras.
  uint64_t DataBytes() const;
};

class PatternTable {
 public:
  PatternTable(const PatternTable&) = delete;
  PatternTable& operator=(const PatternTable&) = delete;
  ~PatternTable();

  // A table just built for `key`: its entries are the first bytes of
  // `memory`. It has no cell layout until AddCellIndex, so a table that is
  // only saved and read back does not make one.
  static std::shared_ptr<PatternTable> FromMemory(AnonymousMemory memory, const PatternKey& key);

  // NotFound when there is no file; DataLoss, with the reason, when the
  // file is truncated, corrupt or made for another key. A loaded table has
  // its cell layout.
  static absl::StatusOr<std::shared_ptr<const PatternTable>> Load(const std::string& path, const PatternKey& key);

  // Lays the distances out by cells instead, where engine/pdb/cell_index.h
  // says so; before the table is shared, as lookups do not expect it to
  // change. Without it (not worth it, or the kernel refused the memory)
  // the table keeps the dense layout.
  void AddCellIndex(const PatternKey& key);

  // Writes to a temporary file and renames it into place, so readers
  // never see half a table. The file holds the dense layout, so a table
  // laid out by cells cannot be saved (FailedPrecondition).
  absl::Status Save(const std::string& path, const PatternKey& key) const;

  // The size of the file holding the table for `key`.
  static uint64_t FileBytes(const PatternKey& key);

  // The distance of the placement of this rank (PlacementIndexer), from
  // whichever layout the table holds: its minimum over blank cells.
  // Lookups in a search read the layouts directly.
  uint8_t operator[](uint64_t rank) const;
  // The same with the blank on `blank` (a cell the placement leaves free);
  // more than operator[] only in a blank-aware table.
  int Value(uint64_t rank, int blank) const;
  // The distances by placement rank, or null once laid out by cells.
  const uint8_t* data() const { return data_; }
  // A blank-aware table's extras by placement rank (blank_extras.h), in
  // either layout; null in a plain table.
  const uint64_t* extras() const { return extras_; }
  // The distances by cells (engine/pdb/cell_index.h; with kHasBlankExtras
  // where a blank-aware table's placement has extras), or null.
  const uint8_t* by_cells() const { return by_cells_.as<uint8_t>(); }
  uint64_t size() const { return size_; }
  bool from_file() const { return fd_ >= 0; }  // read from its cache file, not just built

 private:
  PatternTable() = default;
  void SetShape(const PatternKey& key);

  const uint8_t* data_ = nullptr;
  const uint64_t* extras_ = nullptr;
  bool blank_aware_ = false;
  uint64_t size_ = 0;
  int cells_ = 0;
  int tiles_ = 0;
  void* mapping_ = nullptr;  // anonymous memory: the whole file when read, the table when built
  uint64_t mapping_bytes_ = 0;
  int fd_ = -1;  // the file it was read from, with a shared lock while in use
  AnonymousMemory by_cells_;
  AnonymousMemory extras_copy_;  // a blank-aware table's extras, once its dense layout is let go
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_PATTERN_TABLE_H_
