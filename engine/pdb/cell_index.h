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
//
// A zero-aware table (blank_extras.h) is laid out by cells as bytes too:
// the distance, with its top bit set where the placement has extras for
// some blank cell (a sixth of six-tile placements on 5x5). Only then does
// a lookup go on to the extras, by placement rank. Whole 64-bit entries
// holding every blank cell's extra made a lookup one read, but at eight
// times the bytes, a 24-puzzle search ran 30% fewer nodes a second.
#ifndef NPUZZLE_ENGINE_PDB_CELL_INDEX_H_
#define NPUZZLE_ENGINE_PDB_CELL_INDEX_H_

#include <cstdint>

#include "engine/pdb/anonymous_memory.h"

namespace npuzzle {

// The entries of the cell layout for `tiles` tiles on `cells` cells, or 0
// when the table gets none.
uint64_t CellIndexEntries(int cells, int tiles);

// `dense`: the table by placement rank (PlacementIndexer), followed by its
// extras if `blank_aware`. Not ok() when the table gets no cell layout, the
// memory was refused, or (blank-aware) a distance needs the top bit.
AnonymousMemory BuildCellIndex(const uint8_t* dense, int cells, int tiles, bool blank_aware);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_CELL_INDEX_H_
