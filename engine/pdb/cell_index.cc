#include "engine/pdb/cell_index.h"

#include <algorithm>
#include <bit>
#include <thread>
#include <vector>

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

AnonymousMemory BuildCellIndex(const uint8_t* dense, int cells, int tiles) {
  const uint64_t entries = CellIndexEntries(cells, tiles);
  if (entries == 0) return AnonymousMemory();
  AnonymousMemory memory(entries);
  if (!memory.ok()) return memory;
  uint8_t* out = memory.as<uint8_t>();
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
      CellMask free = cells == 64 ? ~CellMask{0} : CellBit(cells) - 1;
      for (int i = 0; i + 1 < tiles; ++i) {
        base = base * cells + place[i];
        free &= ~CellBit(place[i]);
      }
      base *= cells;
      const uint8_t* in = dense + r * run;
      for (; free != 0; free &= free - 1) out[base + std::countr_zero(free)] = *in++;
    }
  };
  const uint64_t threads = std::clamp<uint64_t>(std::thread::hardware_concurrency(), 1, runs / 4096 + 1);
  std::vector<std::thread> workers;
  for (uint64_t t = 1; t < threads; ++t) workers.emplace_back(fill, runs * t / threads, runs * (t + 1) / threads);
  fill(0, runs / threads);
  for (std::thread& w : workers) w.join();
  return memory;
}

}  // namespace npuzzle
