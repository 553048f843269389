// A pattern table laid out by its tiles' cells: entry
// sum_i cell_i * cells^(k-1-i) holds the distance of the placement with
// tile i on cell_i. Looking up a placement then takes a multiply-add a
// tile, where the dense placement rank takes a popcount, a subtraction
// and a multiply a tile, and the two lookups a 24-puzzle node makes
// spent most of its search time ranking (about 13% more nodes a second
// measured on Korf-Taylor instance 1 with 6-6-6-6). Entries where two tiles
// share a cell are never read. Made only where the layout is at most
// twice the dense one (six tiles on 5x5: 244 M entries against 127.5 M),
// which it then replaces in memory, so that it never costs more than
// twice the dense table.
#ifndef NPUZZLE_ENGINE_PDB_CELL_INDEX_H_
#define NPUZZLE_ENGINE_PDB_CELL_INDEX_H_

#include <cstdint>

#include "engine/pdb/anonymous_memory.h"

namespace npuzzle {

// The entries of the cell layout for `tiles` tiles on `cells` cells, or 0
// when the table gets none.
uint64_t CellIndexEntries(int cells, int tiles);

// `dense`: the table by placement rank (PlacementIndexer). Not ok() when
// the table gets no cell layout or the memory was refused.
AnonymousMemory BuildCellIndex(const uint8_t* dense, int cells, int tiles);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_CELL_INDEX_H_
