// A minimal IDA* with incremental Manhattan distance for the 15-puzzle, in
// plain C, written the way the classic papers present it (Korf 1985): one
// recursive function over a global board. It is the yardstick for the
// engine's IDA* node rate; the engine must be at least as fast per node.
#ifndef NPUZZLE_BENCH_REFERENCE_IDA_H_
#define NPUZZLE_BENCH_REFERENCE_IDA_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ReferenceResult {
  int length;          // moves in the solution found
  uint64_t generated;  // children created, never undoing the last move
};

// Solves `tiles` (cell order, 0 the blank) towards the goal 0 1 2 ... 15.
struct ReferenceResult ReferenceIdaStar(const int tiles[16]);

#ifdef __cplusplus
}
#endif

#endif  // NPUZZLE_BENCH_REFERENCE_IDA_H_
