// The auto and anytime algorithms: an answer for every solvable board up to
// 16x16 within milliseconds, better answers while the limits allow, and a
// proven lower bound beside each, so that the caller knows how far from
// shortest the answer can be.
//
// Two parts run side by side and share one best answer and one bound:
//  - the improver: a first answer by lines (staged.h), then beam searches
//    (beam.h) of doubling width, each bounded by the best length so far, so
//    each one that succeeds is strictly shorter. Width is the lever that
//    pays: measured on random 6x6 boards, width 1,000 gives 1.61x the
//    start's Manhattan + linear-conflict bound, 5,000 1.52x and 50,000
//    1.44x, while weighted A* over the same heuristic gave nothing in 10 s
//    at weight 1.5 and 1.66x at weight 2, and re-solving 16- to 64-move
//    windows of a beam's answer optimally saved under 1%. Re-solving 40-
//    to 100-move windows with beams an eighth as wide, aimed at each
//    window's end, shortened a lone beam's answer by 1-3% on 7x7 in a tenth
//    of its time, but after every beam of a 10 s solve it changed nothing
//    beyond noise (docs/benchmarks.md), so it is not done.
//  - the prover: IDA* with linear conflicts (boards up to 8x8, one thread
//    of the job's), whose every exhausted threshold is a lower bound on
//    the optimal length, and whose answer, if it finds one, is optimal.
//    Its thresholds grow steadily, so once the next one cannot finish
//    before the time limit it stops and its thread joins the beams: on
//    7x7 and 8x8 that is within the first seconds of a 10 s job.
//
// Where the pattern tables for the board and goal are built in the cache
// (the request's table settings; boards up to 8x8), both parts use them
// once this process holds them (table_watch.h: they are loaded in the
// background, never built or waited for): the prover searches with them,
// and the beams rank children by the larger of their value and Manhattan
// + linear conflicts. The bound then starts far higher, and on Korf and
// Taylor's 5x5 boards the answers come within 2.1% of optimal at 10 s,
// against 8.4% without (docs/benchmarks.md).
//
// auto on a board of at most 16 cells gives the prover every thread after
// the first answer: such boards are proven in seconds at most, and the
// answer is then optimal (and if a limit stops it first, the first answer
// still comes back). Everywhere else auto is anytime.
//
// The solve ends when the prover finds its answer (optimal), the best
// length is within max_gap of the bound (or equals it: optimal), a limit
// or a cancel stops it, or the widest beam the memory limit allows has
// run. An answer found is never thrown away: it is the result whatever
// ends the solve, with status "solved" (or "cancelled"), and stopped_by
// says why it ended.
#ifndef NPUZZLE_ENGINE_ANYTIME_ANYTIME_SOLVER_H_
#define NPUZZLE_ENGINE_ANYTIME_ANYTIME_SOLVER_H_

#include "absl/status/statusor.h"
#include "engine/solver.h"

namespace npuzzle {

// For Solve: `request` is checked and its board solvable. The moves are
// not yet replayed (Solve does that for every algorithm).
absl::StatusOr<SolveResult> SolveAnytime(const SolveRequest& request);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ANYTIME_ANYTIME_SOLVER_H_
