// PackedState: a board packed into machine words, used as the hash key of
// graph searches. Each cell is exactly as wide as the board's largest tile
// needs (4 bits up to 16 cells, 5 up to 32, 6 up to 64), and the widths are
// derived from the capacity at compile time, so no tile can be cut short.
#ifndef NPUZZLE_ENGINE_PACKED_STATE_H_
#define NPUZZLE_ENGINE_PACKED_STATE_H_

#include <array>
#include <bit>
#include <cstdint>

#include "engine/board.h"

namespace npuzzle {

// Holds boards of up to kMaxCellsHeld cells, whose tiles are 0 to
// kMaxCellsHeld - 1.
template <int kMaxCellsHeld>
class PackedState {
 public:
  static constexpr int kCapacity = kMaxCellsHeld;
  static constexpr int kBits = std::bit_width(static_cast<unsigned>(kMaxCellsHeld - 1));
  static constexpr int kCellsPerWord = 64 / kBits;
  static constexpr int kWords = (kMaxCellsHeld + kCellsPerWord - 1) / kCellsPerWord;
  static_assert((1 << kBits) >= kMaxCellsHeld, "a cell must hold the largest tile");
  static_assert(kWords * kCellsPerWord >= kMaxCellsHeld, "the words must hold every cell");

  // `at[c]` is the tile on cell c, for the first `cells` cells.
  template <class Cells>
  static PackedState Pack(const Cells& at, int cells) {
    PackedState s;
    for (int c = 0; c < cells; ++c) s.Set(c, at[c]);
    return s;
  }

  int Get(int cell) const { return static_cast<int>((words_[Word(cell)] >> Shift(cell)) & kMask); }

  void Set(int cell, int tile) {
    uint64_t& w = words_[Word(cell)];
    w = (w & ~(kMask << Shift(cell))) | (static_cast<uint64_t>(tile) << Shift(cell));
  }

  // Moves the tile on `from` to `to`, which must hold the blank (0): two
  // word operations instead of two read-modify-write Sets.
  void MoveTile(int from, int to) {
    const uint64_t tile = (words_[Word(from)] >> Shift(from)) & kMask;
    words_[Word(to)] |= tile << Shift(to);
    words_[Word(from)] &= ~(kMask << Shift(from));
  }

  // Written out: std::array's == calls memcmp out of line, a measurable
  // cost for one-word keys on the hash-probe path.
  friend bool operator==(const PackedState& a, const PackedState& b) {
    for (int i = 0; i < kWords; ++i) {
      if (a.words_[i] != b.words_[i]) return false;
    }
    return true;
  }

  // One wide multiply a word, its two halves folded together (the mixing
  // step of wyhash and MUM hashing), so that every bit of the result
  // depends on every cell: the state index takes a slot and a shard from
  // different bits. A 3x3 A* solve spent 7% of its time in the chain of
  // multiplies and shifts (MurmurHash3's finaliser) this replaced.
  uint64_t Hash() const {
    uint64_t h = 0;
    for (int i = 0; i < kWords; ++i) {
      __extension__ using Wide = unsigned __int128;
      const Wide product = static_cast<Wide>(h ^ words_[i]) * 0x9E3779B97F4A7C15;
      h = static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
    }
    return h;
  }

 private:
  static constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
  // Unsigned: a signed division by a constant costs extra instructions on
  // the hottest path of every graph search. Constant for a one-word state,
  // so that the word stays in a register rather than being indexed in
  // memory.
  static constexpr unsigned Word(int cell) { return kWords == 1 ? 0 : static_cast<unsigned>(cell) / kCellsPerWord; }
  static constexpr unsigned Shift(int cell) { return kBits * (static_cast<unsigned>(cell) % kCellsPerWord); }

  std::array<uint64_t, kWords> words_{};
};

// The packings the engine uses, narrowest first; the widest holds every
// board the engine accepts.
using PackedState16 = PackedState<16>;
using PackedState32 = PackedState<32>;
using PackedState64 = PackedState<kMaxCells>;
static_assert(PackedState64::kCapacity >= kMaxCells);

// Calls f(PackedState<...>{}) with the narrowest packing that holds `cells`.
template <class F>
auto WithPackedState(int cells, F&& f) {
  if (cells <= PackedState16::kCapacity) return f(PackedState16{});
  if (cells <= PackedState32::kCapacity) return f(PackedState32{});
  return f(PackedState64{});
}

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PACKED_STATE_H_
