// Shows a solve result to people (boards, moves, statistics) or to scripts
// (one JSON object per problem).
#ifndef NPUZZLE_CLIENT_RENDER_H_
#define NPUZZLE_CLIENT_RENDER_H_

#include <string>

#include "engine/board.h"
#include "engine/search.h"
#include "engine/solver.h"
#include "nlohmann/json.hpp"

namespace npuzzle {

std::string RenderHuman(const Board& start, const Board& goal, const SolveResult& result, bool show_steps);

nlohmann::json ResultToJson(const Board& start, const Board& goal, const SolveResult& result);

// "1.2M nodes, 3.4M/s, bound 52, 1.23 s, ~40% of bound 52, ~12 s left":
// the live progress line.
std::string RenderProgress(const Progress& p);
// Its estimate (", ~40% of bound 52, ~12 s left"; "" without one).
std::string RenderEstimate(const Progress& p);

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_RENDER_H_
