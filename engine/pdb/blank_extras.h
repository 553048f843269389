// Zero-aware pattern tables (Clausecker and Reinefeld, SoCS 2021). A plain
// table keeps, for each placement of its tiles, the fewest moves of those
// tiles from the best blank position. But the other tiles move for free
// only within the blank's region of the cells the pattern leaves free:
// when the pattern's tiles wall the blank in (a corner cut off, a pocket
// on an edge), reaching the goal may take more of their moves from the
// blank's actual region than from the best one. A zero-aware table also
// keeps that extra for every free cell the blank can be on, so a lookup
// adds it; the sum stays admissible and additive, as each table still
// counts only its own tiles' moves.
//
// An extra is always even: every move of a pattern tile changes the sum of
// the pattern tiles' Manhattan distances by one, so every path to the goal
// from a placement, whatever the blank's region, has that sum's parity.
// So a 2-bit field holds half the extra, up to 6 moves (a larger one is
// kept as 6: still a lower bound, and still even). An odd cap would break
// the parity IDA*'s thresholds rely on to step by two: saturating at 3
// moves doubled the iterations, and the nodes, on Korf and Taylor's
// instance 1.
//
// The fields are in placement rank order, each placement's free cells in
// cell order: about five times the plain table's bytes for six tiles on
// 5x5. They follow the plain entries in the same memory, from the next
// 8-byte boundary.
#ifndef NPUZZLE_ENGINE_PDB_BLANK_EXTRAS_H_
#define NPUZZLE_ENGINE_PDB_BLANK_EXTRAS_H_

#include <bit>
#include <cstdint>

#include "engine/pdb/placement.h"

namespace npuzzle {

inline constexpr uint64_t kMaxBlankExtraField = 3;  // 6 moves
// In a cell layout's byte (cell_index.h): the placement has extras.
inline constexpr uint8_t kHasBlankExtras = 0x80;
inline constexpr uint64_t kBlankExtrasPerWord = 32;

// Where the extras start in a table of `entries` plain entries.
inline uint64_t BlankExtrasOffset(uint64_t entries) { return (entries + 7) / 8 * 8; }

// The bytes of the extras for `entries` placements of `tiles` tiles on
// `cells` cells.
inline uint64_t BlankExtrasBytes(uint64_t entries, int cells, int tiles) {
  return (entries * static_cast<uint64_t>(cells - tiles) + kBlankExtrasPerWord - 1) / kBlankExtrasPerWord * 8;
}

// The field of the placement of `rank` with the blank on its
// `free_rank`-th free cell.
inline uint64_t BlankExtraField(uint64_t rank, int free_cells, int free_rank) {
  return rank * static_cast<uint64_t>(free_cells) + static_cast<uint64_t>(free_rank);
}

// The field itself (half the extra moves), and the extra moves.
inline int BlankExtraFieldAt(const uint64_t* extras, uint64_t field) {
  return static_cast<int>(extras[field / kBlankExtrasPerWord] >> (field % kBlankExtrasPerWord * 2) &
                          kMaxBlankExtraField);
}
inline int BlankExtraAt(const uint64_t* extras, uint64_t field) { return 2 * BlankExtraFieldAt(extras, field); }

// `cell`'s place among the cells `placed` leaves free (it is one of them).
inline int FreeRank(CellMask placed, int cell) { return cell - std::popcount(placed & CellsBelow(cell)); }

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_BLANK_EXTRAS_H_
