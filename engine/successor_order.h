// The order in which a search tries a node's successors: as listed (U, D,
// L, R) by default, or shuffled per node from a seed, which breaks ties
// between equally good successors at random but reproducibly.
#ifndef NPUZZLE_ENGINE_SUCCESSOR_ORDER_H_
#define NPUZZLE_ENGINE_SUCCESSOR_ORDER_H_

#include <array>
#include <cstdint>
#include <optional>
#include <random>

#include "engine/moves.h"

namespace npuzzle {

class SuccessorOrder {
 public:
  using Permutation = std::array<uint8_t, kNumDirs>;

  explicit SuccessorOrder(std::optional<uint64_t> seed)
      : shuffle_(seed.has_value()), rng_(seed.value_or(0)) {
    int i = 0;
    for (uint8_t a = 0; a < kNumDirs; ++a)
      for (uint8_t b = 0; b < kNumDirs; ++b)
        for (uint8_t c = 0; c < kNumDirs; ++c)
          if (a != b && a != c && b != c) {
            permutations_[i++] = {a, b, c, static_cast<uint8_t>(6 - a - b - c)};
          }
  }

  // Picks an order for a node's successors: 0 (as listed) unless seeded.
  uint8_t Pick() { return shuffle_ ? static_cast<uint8_t>(rng_() % 24) : 0; }

  // The i-th successor to visit, out of `count`, under order `pick`. Each
  // of the 24 orders ranks all four slots, so dropping the slots at or
  // beyond `count` still leaves every order of the rest equally likely.
  int Slot(uint8_t pick, int count, int i) const {
    return pick == 0 ? i : ShuffledSlot(pick, count, i);
  }

 private:
  int ShuffledSlot(uint8_t pick, int count, int i) const {
    const Permutation& p = permutations_[pick];
    int seen = -1;
    for (int k = 0; k < kNumDirs; ++k) {
      if (p[k] < count && ++seen == i) return p[k];
    }
    return i;
  }

  bool shuffle_;
  std::mt19937_64 rng_;
  std::array<Permutation, 24> permutations_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_SUCCESSOR_ORDER_H_
