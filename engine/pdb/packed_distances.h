// PackedDistances: a table build's entry per placement while it builds,
// `bits` wide (0: not reached yet), packed into 64-bit words. Seven bits
// hold distances up to 126 (the 15-puzzle's 8-tile table reaches 38) in
// 7/8 of a byte, which is what lets that table build beside its scratch
// space within 1.5 GB; should a build's distances outgrow the width, it
// widens to a byte an entry. At eight bits the words are the
// bytes of a plain byte array (the machines are little-endian), which is
// what a finished table is.
#ifndef NPUZZLE_ENGINE_PDB_PACKED_DISTANCES_H_
#define NPUZZLE_ENGINE_PDB_PACKED_DISTANCES_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>

#include "engine/pdb/anonymous_memory.h"

namespace npuzzle {

static_assert(std::endian::native == std::endian::little, "eight-bit entries are read as a byte array");

// The width table builds use.
inline constexpr int kBuildDistanceBits = 7;

class PackedDistances {
 public:
  // `bits` from 1 to 8. Check ok().
  PackedDistances(uint64_t size, int bits)
      : size_(size), bits_(bits), per_word_(64 / bits), memory_(Bytes(size, bits)) {}

  // What `size` entries of `bits` take.
  static uint64_t Bytes(uint64_t size, int bits) {
    const uint64_t per_word = 64 / bits;
    return (size + per_word - 1) / per_word * 8;
  }

  bool ok() const { return memory_.ok(); }
  int bits() const { return bits_; }
  uint64_t bytes() const { return memory_.bytes(); }
  // The largest value an entry holds.
  uint64_t max_value() const { return (uint64_t{1} << bits_) - 1; }

  uint64_t Get(uint64_t i) const { return (Word(i).load(std::memory_order_relaxed) >> Shift(i)) & max_value(); }
  // Sets entry i to `value` (at most max_value()) if it is still 0. Safe
  // from many threads; of those setting one entry at once, one wins.
  void SetIfUnset(uint64_t i, uint64_t value) {
    std::atomic_ref<uint64_t> word = Word(i);
    const int shift = Shift(i);
    uint64_t old = word.load(std::memory_order_relaxed);
    while (((old >> shift) & max_value()) == 0) {
      if (word.compare_exchange_weak(old, old | (value << shift), std::memory_order_relaxed)) return;
    }
  }

  uint64_t words() const { return (size_ + per_word_ - 1) / per_word_; }
  // Fills words [begin, end) with the entries of `from`, which must be as
  // many. Threads filling disjoint ranges need no more care than that.
  void CopyWords(const PackedDistances& from, uint64_t begin, uint64_t end) {
    uint64_t* words = memory_.as<uint64_t>();
    for (uint64_t w = begin; w < end; ++w) {
      uint64_t word = 0;
      const uint64_t first = w * per_word_;
      for (uint64_t i = first; i < std::min(size_, first + per_word_); ++i) word |= from.Get(i) << Shift(i);
      words[w] = word;
    }
  }

  // The memory, once at eight bits: a byte an entry.
  AnonymousMemory TakeBytes() && { return std::move(memory_); }

 private:
  std::atomic_ref<uint64_t> Word(uint64_t i) const {
    return std::atomic_ref<uint64_t>(memory_.as<uint64_t>()[i / per_word_]);
  }
  int Shift(uint64_t i) const { return static_cast<int>(i % per_word_) * bits_; }

  uint64_t size_;
  int bits_;
  uint64_t per_word_;
  AnonymousMemory memory_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_PACKED_DISTANCES_H_
