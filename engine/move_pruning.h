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
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "engine/moves.h"

namespace npuzzle {

class MovePruning {
 public:
  static constexpr int kStart = 0;
  // A state number none has: states are 16 bits, so that a machine stays in
  // a fast cache (52,127 states at 14 moves on 5x5, 417 KB).
  static constexpr int kPruned = UINT16_MAX;
  static constexpr int kMaxLength = 14;
  // A length whose machine builds in milliseconds on every shape, for a
  // search to use while a longer one builds (MachineBuild).
  static constexpr int kQuickLength = 10;
  // A build stops at the longest length that fits in this much memory,
  // measured: 14 moves on 4x4, 4x5 and 5x5 (148 MB and 1.4 s on 5x5), 13 on
  // 6x6 and 8x8, which would take a gigabyte or more at 14.
  static constexpr uint64_t kMaxBuildBytes = uint64_t{256} << 20;
  // The quick length's build stays under this on every shape (8.4 MB
  // resident for a whole process building 8x8's).
  static constexpr uint64_t kQuickBuildBytes = uint64_t{32} << 20;

  // The machine for a rows x cols board, comparing sequences of up to
  // `max_length` moves (2 gives exactly "never undo the last move").
  // Memory and time grow about sixfold for each two moves of length.
  // `stop`, when given, is asked every few thousand sequences: once it
  // says yes the build gives up and returns nothing. Past `max_bytes`, the
  // machine compares shorter sequences (length()).
  static std::optional<MovePruning> Build(int rows, int cols, int max_length,
                                          const std::function<bool()>& stop = nullptr,
                                          uint64_t max_bytes = kMaxBuildBytes);
  // The same, built once per process for each shape and length (at most
  // kMaxLength); null when `stop` ended the build.
  static const MovePruning* For(int rows, int cols, int max_length, const std::function<bool()>& stop = nullptr);

  // The state after move `d` from `state`, or kPruned when the sequence so
  // far ends with one that has an equivalent no longer than itself.
  int Next(int state, Dir d) const { return next_[state][static_cast<int>(d)]; }

  int states() const { return static_cast<int>(next_.size()); }
  // How many minimal sequences the machine rejects.
  int pruned_sequences() const { return pruned_sequences_; }
  // The longest sequences it compares: the length asked for, or less where
  // that build would have taken more than its memory budget.
  int length() const { return length_; }

 private:
  std::vector<std::array<uint16_t, kNumDirs>> next_;
  int pruned_sequences_ = 0;
  int length_ = 0;
};

// MovePruning::For on a thread of its own, for a search that goes on with
// a shorter machine meanwhile: the longest take a second or more to build.
class MachineBuild {
 public:
  MachineBuild(int rows, int cols, int length);
  MachineBuild(const MachineBuild&) = delete;
  MachineBuild& operator=(const MachineBuild&) = delete;
  // Stops the build if it is still going (within milliseconds).
  ~MachineBuild();

  // The machine, once built; null until then.
  const MovePruning* Ready() const { return machine_.load(); }

 private:
  std::atomic<bool> abandoned_{false};
  std::atomic<const MovePruning*> machine_{nullptr};
  std::thread thread_;  // last, so that it starts once the rest is made
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_MOVE_PRUNING_H_
