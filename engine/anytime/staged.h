// A first answer for any solvable board, fast: the board is solved a line
// at a time. Each step takes a row or column off one side of the part not
// yet solved (a side without the goal blank, keeping that part near
// square), places its tiles with small searches, and then never moves them
// again; the last part, at most 3x3, is solved exactly. A line's tiles go
// in one at a time, each at whichever end of the line's open part is the
// cheaper to fill, except its last two, placed together (the only way, with
// the rest of the line fixed, that is always possible).
//
// A tile goes home by a narrow beam over whole states, ranked by the exact
// moves left to place it (every other unfixed tile being interchangeable)
// plus the other tiles' Manhattan distance, so that its way also brings
// others nearer home; the last two of a line go together by an A* over the
// positions of the blank and the two tiles. Either way a path is a legal
// path on the real board, so the answer is correct by construction; it is
// far from shortest (a tile at a time, along the part that is left), and
// the anytime solver improves it.
#ifndef NPUZZLE_ENGINE_ANYTIME_STAGED_H_
#define NPUZZLE_ENGINE_ANYTIME_STAGED_H_

#include <optional>
#include <vector>

#include "engine/anytime/grid.h"
#include "engine/moves.h"

namespace npuzzle {

// The moves from `start` to `target` (which must be reachable), or nullopt
// if `stop` says so before the answer is complete (it is asked between
// placements).
std::optional<std::vector<Dir>> SolveByLines(const Grid& grid, const GridState& start, const GridState& target,
                                             const std::function<bool()>& stop);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ANYTIME_STAGED_H_
