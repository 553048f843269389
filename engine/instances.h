// Random solvable boards for any shape and goal, reproducible from a seed.
#ifndef NPUZZLE_ENGINE_INSTANCES_H_
#define NPUZZLE_ENGINE_INSTANCES_H_

#include <cstdint>
#include <random>

#include "engine/board.h"

namespace npuzzle {

// Uniform over the boards that can reach `goal`.
Board RandomSolvableBoard(const Board& goal, std::mt19937_64& rng);

// `moves` random blank moves from `goal`, never undoing the previous one.
Board RandomWalk(const Board& goal, int moves, std::mt19937_64& rng);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_INSTANCES_H_
