// MovePruning: a finite-state machine over the blank's moves that lets a
// depth-first search skip move sequences which have an equivalent no
// longer than themselves (Taylor and Korf, 1993). "Never undo the last
// move" is its smallest case; longer ones (going round a 2x2 square one
// way instead of the other, for example) cut the effective branching
// factor further, so IDA* generates fewer nodes for the same answer.
//
// Why the answer stays optimal: two move sequences are equivalent when,
// from any position, they move the blank to the same place and the tiles
// the same way. A sequence A is pruned only when an equivalent B is
// shorter, or as long and earlier in U < D < L < R order, and B's
// footprint (the box of cells the blank crosses, relative to where it
// starts) lies inside A's, so B is legal wherever A is. Among the shortest
// solutions take the earliest in that order: replacing any pruned piece of
// it by its B would give a shorter or an earlier legal solution, so no
// piece of it is pruned, and the search finds it.
#ifndef NPUZZLE_ENGINE_MOVE_PRUNING_H_
#define NPUZZLE_ENGINE_MOVE_PRUNING_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/moves.h"

namespace npuzzle {

class MovePruning {
 public:
  static constexpr int kStart = 0;
  static constexpr int kPruned = -1;
  static constexpr int kMaxLength = 10;
  // Building a machine of up to kMaxLength takes at most this much memory
  // on any shape (measured: 44 MB on 8x8, 16 MB on 4x4).
  static constexpr uint64_t kMaxBuildBytes = uint64_t{128} << 20;

  // The machine for a rows x cols board, comparing sequences of up to
  // `max_length` moves (2 gives exactly "never undo the last move").
  // Memory and time grow about fivefold for each two moves of length.
  // `stop`, when given, is asked every few thousand sequences: once it
  // says yes the build gives up and returns nothing.
  static std::optional<MovePruning> Build(int rows, int cols, int max_length,
                                          const std::function<bool()>& stop = nullptr);
  // The same, built once per process for each shape and length (at most
  // kMaxLength); null when `stop` ended the build.
  static const MovePruning* For(int rows, int cols, int max_length, const std::function<bool()>& stop = nullptr);

  // The state after move `d` from `state`, or kPruned when the sequence so
  // far ends with one that has an equivalent no longer than itself.
  int Next(int state, Dir d) const { return next_[state][static_cast<int>(d)]; }

  int states() const { return static_cast<int>(next_.size()); }
  // How many minimal sequences the machine rejects.
  int pruned_sequences() const { return pruned_sequences_; }

 private:
  std::vector<std::array<int32_t, kNumDirs>> next_;
  int pruned_sequences_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_MOVE_PRUNING_H_
