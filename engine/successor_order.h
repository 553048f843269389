// The order in which a search tries the blank's four moves: fixed
// (U, D, L, R) by default, or shuffled per node from a seed, which breaks
// ties between equally good successors at random but reproducibly.
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
  using Order = std::array<Dir, kNumDirs>;

  explicit SuccessorOrder(std::optional<uint64_t> seed)
      : shuffle_(seed.has_value()), rng_(seed.value_or(0)) {
    int i = 0;
    for (int a = 0; a < kNumDirs; ++a)
      for (int b = 0; b < kNumDirs; ++b)
        for (int c = 0; c < kNumDirs; ++c)
          for (int d = 0; d < kNumDirs; ++d)
            if (a != b && a != c && a != d && b != c && b != d && c != d)
              orders_[i++] = {Dir(a), Dir(b), Dir(c), Dir(d)};
  }

  // One of the 24 orders: always the first (U, D, L, R) unless seeded.
  int NextIndex() { return shuffle_ ? static_cast<int>(rng_() % 24) : 0; }
  const Order& Get(int index) const { return orders_[index]; }
  const Order& Next() { return orders_[NextIndex()]; }

 private:
  bool shuffle_;
  std::mt19937_64 rng_;
  std::array<Order, 24> orders_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_SUCCESSOR_ORDER_H_
