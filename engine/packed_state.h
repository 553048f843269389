// PackedState: a board packed into machine words (4 bits a cell up to 16
// cells, 5 up to 36, 6 up to 64), used as the hash key of graph searches.
#ifndef NPUZZLE_ENGINE_PACKED_STATE_H_
#define NPUZZLE_ENGINE_PACKED_STATE_H_

#include <array>
#include <cstdint>
#include <utility>

#include "engine/puzzle.h"

namespace npuzzle {

template <int kWords, int kBits>
class PackedState {
 public:
  static constexpr int kCellsPerWord = 64 / kBits;
  static constexpr int kCapacity = kWords * kCellsPerWord;

  static PackedState Pack(const Tiles& t, int cells) {
    PackedState s;
    for (int c = 0; c < cells; ++c) s.Set(c, t.at[c]);
    return s;
  }

  void Unpack(int cells, Tiles* t) const {
    for (int c = 0; c < cells; ++c) {
      const int tile = Get(c);
      t->at[c] = static_cast<uint8_t>(tile);
      t->pos[tile] = static_cast<uint8_t>(c);
    }
  }

  int Get(int cell) const {
    return static_cast<int>((words_[cell / kCellsPerWord] >> Shift(cell)) & kMask);
  }

  void Set(int cell, int tile) {
    uint64_t& w = words_[cell / kCellsPerWord];
    w = (w & ~(kMask << Shift(cell))) | (static_cast<uint64_t>(tile) << Shift(cell));
  }

  // Written out: std::array's == calls memcmp out of line, a measurable
  // cost for one-word keys on the hash-probe path.
  friend bool operator==(const PackedState& a, const PackedState& b) {
    for (int i = 0; i < kWords; ++i) {
      if (a.words_[i] != b.words_[i]) return false;
    }
    return true;
  }

  template <typename H>
  friend H AbslHashValue(H h, const PackedState& s) {
    return H::combine_contiguous(std::move(h), s.words_.data(), kWords);
  }

 private:
  static constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
  static constexpr int Shift(int cell) { return kBits * (cell % kCellsPerWord); }

  std::array<uint64_t, kWords> words_{};
};

// Calls f(PackedState<...>{}) with the narrowest packing that holds `cells`.
template <class F>
auto WithPackedState(int cells, F&& f) {
  if (cells <= PackedState<1, 4>::kCapacity) return f(PackedState<1, 4>{});
  if (cells <= PackedState<3, 5>::kCapacity) return f(PackedState<3, 5>{});
  return f(PackedState<7, 6>{});
}

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PACKED_STATE_H_
