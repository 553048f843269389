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
namespace successor_order_internal {

inline constexpr int kOrders = 24;

// The 24 orders of the four moves.
struct Permutations {
  std::array<std::array<uint8_t, kNumDirs>, kOrders> at{};
  constexpr Permutations() {
    int i = 0;
    for (uint8_t a = 0; a < kNumDirs; ++a)
      for (uint8_t b = 0; b < kNumDirs; ++b)
        for (uint8_t c = 0; c < kNumDirs; ++c)
          if (a != b && a != c && b != c) {
            at[i++] = {a, b, c, static_cast<uint8_t>(6 - a - b - c)};
          }
  }
};

}  // namespace successor_order_internal

class SuccessorOrder {
 public:
  // The engine is made only when seeded: seeding one costs as much as a
  // small 3x3 solve's whole set-up.
  explicit SuccessorOrder(std::optional<uint64_t> seed) {
    if (seed) rng_.emplace(*seed);
  }

  bool shuffles() const { return rng_.has_value(); }

  // Picks an order for a node's successors: 0 (as listed) unless seeded.
  uint8_t Pick() { return rng_ ? static_cast<uint8_t>((*rng_)() % kOrders) : 0; }

  // The i-th successor to visit, out of `count`, under order `pick`. Each
  // of the 24 orders ranks all four slots, so dropping the slots at or
  // beyond `count` still leaves every order of the rest equally likely.
  static int Slot(uint8_t pick, int count, int i) {
    if (pick == 0) return i;
    const auto& p = kPermutations.at[pick];
    int seen = -1;
    for (int k = 0; k < kNumDirs; ++k) {
      if (p[k] < count && ++seen == i) return p[k];
    }
    return i;
  }

 private:
  static constexpr int kOrders = successor_order_internal::kOrders;
  static constexpr successor_order_internal::Permutations kPermutations{};

  std::optional<std::mt19937_64> rng_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_SUCCESSOR_ORDER_H_
