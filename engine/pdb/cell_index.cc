#include "engine/pdb/cell_index.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <thread>
#include <vector>

#include "engine/pdb/blank_extras.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/pdb/placement.h"

namespace npuzzle {

uint64_t CellIndexEntries(int cells, int tiles) {
  uint64_t entries = 1;
  for (int i = 0; i < tiles; ++i) {
    entries *= static_cast<uint64_t>(cells);
    // Indices are 32-bit in the search's lookups.
    if (entries > UINT32_MAX) return 0;
  }
  return entries <= 2 * PatternEntries(cells, tiles) ? entries : 0;
}

namespace {

// Calls write(index, rank, placed) for every placement: its place in the
// cell layout, its placement rank and its tiles' cells, from several
// threads over disjoint ranks.
template <class Write>
void ForEachPlacement(int cells, int tiles, Write write) {
  const PlacementIndexer indexer(cells, tiles);
  // The last tile's digit has place value 1 in both layouts, so a run of
  // consecutive ranks fills the free cells of one block of the cell
  // layout in ascending order: both sides are read and written in order.
  const uint64_t run = static_cast<uint64_t>(cells - tiles + 1);
  const uint64_t runs = indexer.size() / run;
  const auto fill = [&](uint64_t first_run, uint64_t end_run) {
    uint8_t place[64];
    uint8_t digit[64];
    indexer.Unrank(first_run * run, place, digit);
    for (uint64_t r = first_run; r < end_run; ++r) {
      if (r > first_run) indexer.Advance(run, place, digit);
      uint64_t base = 0;
      CellMask placed = 0;
      for (int i = 0; i + 1 < tiles; ++i) {
        base = base * cells + place[i];
        placed |= CellBit(place[i]);
      }
      base *= cells;
      CellMask free = (cells == 64 ? ~CellMask{0} : CellBit(cells) - 1) & ~placed;
      for (uint64_t rank = r * run; free != 0; free &= free - 1, ++rank) {
        const int last = std::countr_zero(free);
        write(base + last, rank, placed | CellBit(last));
      }
    }
  };
  const uint64_t threads = std::clamp<uint64_t>(std::thread::hardware_concurrency(), 1, runs / 4096 + 1);
  std::vector<std::thread> workers;
  for (uint64_t t = 1; t < threads; ++t) workers.emplace_back(fill, runs * t / threads, runs * (t + 1) / threads);
  fill(0, runs / threads);
  for (std::thread& w : workers) w.join();
}

}  // namespace

AnonymousMemory BuildCellIndex(const uint8_t* dense, int cells, int tiles, bool blank_aware) {
  const uint64_t entries = CellIndexEntries(cells, tiles);
  if (entries == 0) return AnonymousMemory();
  AnonymousMemory memory(entries);
  if (!memory.ok()) return memory;
  uint8_t* out = memory.as<uint8_t>();
  if (!blank_aware) {
    ForEachPlacement(cells, tiles, [&](uint64_t index, uint64_t rank, CellMask) { out[index] = dense[rank]; });
    return memory;
  }
  const uint64_t* extras = reinterpret_cast<const uint64_t*>(dense + BlankExtrasOffset(PatternEntries(cells, tiles)));
  const int free_cells = cells - tiles;
  std::atomic<bool> too_far{false};
  ForEachPlacement(cells, tiles, [&](uint64_t index, uint64_t rank, CellMask) {
    uint8_t entry = dense[rank];
    if (entry & kHasBlankExtras) too_far.store(true, std::memory_order_relaxed);
    for (int free_rank = 0; free_rank < free_cells; ++free_rank) {
      if (BlankExtraFieldAt(extras, BlankExtraField(rank, free_cells, free_rank)) != 0) {
        entry |= kHasBlankExtras;
        break;
      }
    }
    out[index] = entry;
  });
  return too_far.load() ? AnonymousMemory() : std::move(memory);
}

}  // namespace npuzzle
