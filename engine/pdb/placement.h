// Placements of a pattern's k tiles on an n-cell board, numbered densely
// from 0 to n!/(n-k)! - 1: the index of a pattern database. A placement is
// the list of cells of the pattern's tiles, in the pattern's tile order.
#ifndef NPUZZLE_ENGINE_PDB_PLACEMENT_H_
#define NPUZZLE_ENGINE_PDB_PLACEMENT_H_

#include <bit>
#include <cstdint>

namespace npuzzle {

// A set of cells as bits (cell c is bit c); boards have at most 64 cells.
using CellMask = uint64_t;

inline CellMask CellBit(int cell) { return CellMask{1} << cell; }
inline CellMask CellsBelow(int cell) { return CellBit(cell) - 1; }

// at[b][n]: the position of the n-th set bit of byte b.
struct SelectInByteTable {
  uint8_t at[256][8];
  constexpr SelectInByteTable() : at() {
    for (int b = 0; b < 256; ++b) {
      int n = 0;
      for (int i = 0; i < 8; ++i) {
        if ((b >> i) & 1) at[b][n++] = static_cast<uint8_t>(i);
      }
    }
  }
};
inline constexpr SelectInByteTable kSelectInByte{};

class PlacementIndexer {
 public:
  PlacementIndexer(int cells, int tiles) : cells_(cells), tiles_(tiles) {
    size_ = 1;
    for (int i = tiles - 1; i >= 0; --i) {
      weight_[i] = size_;
      size_ *= static_cast<uint64_t>(cells - i);
    }
  }

  // The place value of digit i: the rank is the sum of digit_i * weight(i).
  uint64_t weight(int i) const { return weight_[i]; }
  int tiles() const { return tiles_; }
  uint64_t size() const { return size_; }

  // Mixed radix n, n-1, ..., n-k+1: digit i counts the cells below the
  // i-th tile's cell that no earlier tile holds.
  // cell_of(i): the cell of the pattern's i-th tile.
  // Summed by place value rather than in Horner's form: the digits'
  // products are independent, where Horner's form chained a multiply per
  // tile in front of every table load (9% of a 24-puzzle search's time).
  // Also gives the cells the tiles hold when `placed` is not null.
  template <class CellOf>
  uint64_t RankBy(CellOf cell_of, CellMask* placed = nullptr) const {
    uint64_t rank = 0;
    CellMask used = 0;
    for (int i = 0; i < tiles_; ++i) {
      const int cell = cell_of(i);
      rank += static_cast<uint64_t>(cell - std::popcount(used & CellsBelow(cell))) * weight_[i];
      used |= CellBit(cell);
    }
    if (placed != nullptr) *placed = used;
    return rank;
  }

  uint64_t Rank(const uint8_t* cells) const {
    return RankBy([cells](int i) { return cells[i]; });
  }

  // Ranks below 2^32 (every table the engine builds) take the cheaper
  // 32-bit divisions.
  // Also gives the digits when `digit` is not null.
  void Unrank(uint64_t rank, uint8_t* cells, uint8_t* digit_out = nullptr) const {
    uint8_t local[64];
    uint8_t* digit = digit_out != nullptr ? digit_out : local;
    if (rank <= UINT32_MAX) {
      uint32_t r = static_cast<uint32_t>(rank);
      for (int i = tiles_ - 1; i >= 0; --i) {
        const uint32_t radix = static_cast<uint32_t>(cells_ - i);
        digit[i] = static_cast<uint8_t>(r % radix);
        r /= radix;
      }
    } else {
      for (int i = tiles_ - 1; i >= 0; --i) {
        const uint64_t radix = static_cast<uint64_t>(cells_ - i);
        digit[i] = static_cast<uint8_t>(rank % radix);
        rank /= radix;
      }
    }
    CellMask free = cells_ == 64 ? ~CellMask{0} : CellBit(cells_) - 1;
    for (int i = 0; i < tiles_; ++i) {
      const int cell = SelectBit(free, digit[i]);
      cells[i] = static_cast<uint8_t>(cell);
      free &= ~CellBit(cell);
    }
  }

  // Moves a placement, given as Unrank gives it, `delta` ranks on (to a
  // rank below size()). A table build walks ranks in order, mostly a few
  // apart: carrying the digits that change and placing only their tiles
  // again takes far less than Unrank's chain of divisions, which was a
  // tenth of a build's time. Costs O(delta) beside that: for small steps.
  void Advance(uint64_t delta, uint8_t* cells, uint8_t* digit) const {
    if (delta == 0) return;
    int i = tiles_ - 1;
    uint64_t carry = delta;
    for (; carry != 0; --i) {
      const uint64_t radix = static_cast<uint64_t>(cells_ - i);
      uint64_t d = digit[i] + carry;
      for (carry = 0; d >= radix; d -= radix) ++carry;
      digit[i] = static_cast<uint8_t>(d);
    }
    CellMask free = cells_ == 64 ? ~CellMask{0} : CellBit(cells_) - 1;
    for (int j = 0; j <= i; ++j) free &= ~CellBit(cells[j]);
    for (int j = i + 1; j < tiles_; ++j) {
      const int cell = SelectBit(free, digit[j]);
      cells[j] = static_cast<uint8_t>(cell);
      free &= ~CellBit(cell);
    }
  }

  // The position of the n-th (from 0) set bit of `mask`.
  static int SelectBit(CellMask mask, int n) {
    for (int byte = 0; byte < 64; byte += 8) {
      const unsigned bits = static_cast<unsigned>((mask >> byte) & 0xff);
      const int in_byte = std::popcount(bits);
      if (n < in_byte) return byte + kSelectInByte.at[bits][n];
      n -= in_byte;
    }
    return -1;
  }

 private:
  int cells_;
  int tiles_;
  uint64_t size_;
  uint64_t weight_[64] = {};
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_PLACEMENT_H_
