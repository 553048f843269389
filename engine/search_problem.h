// SearchProblem: everything one search run needs, handed to an algorithm.
#ifndef NPUZZLE_ENGINE_SEARCH_PROBLEM_H_
#define NPUZZLE_ENGINE_SEARCH_PROBLEM_H_

#include "engine/heuristic.h"
#include "engine/puzzle.h"
#include "engine/search.h"

namespace npuzzle {

template <Heuristic H>
struct SearchProblem {
  const Puzzle& puzzle;
  const H& heuristic;
  const Tiles& start;
  const SearchOptions& options;
  double weight = 1.0;  // weighted A*: f = g + weight * h
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_SEARCH_PROBLEM_H_
