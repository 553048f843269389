// Korf's benchmark instances (tests/data/korf100.txt, korf-taylor-24.txt),
// for the tests and the benchmarks alike.
#ifndef NPUZZLE_TESTS_UTIL_KORF_INSTANCES_H_
#define NPUZZLE_TESTS_UTIL_KORF_INSTANCES_H_

#include <string>
#include <vector>

#include "engine/board.h"

namespace npuzzle {

struct KorfInstance {
  int id;
  int optimal_length;
  Board start;  // goal: blank first (0 1 2 ... N-1)
};

// `file` is a name under tests/data; `side` is 4 or 5.
std::vector<KorfInstance> LoadKorfInstances(const std::string& file, int side);

}  // namespace npuzzle

#endif  // NPUZZLE_TESTS_UTIL_KORF_INSTANCES_H_
