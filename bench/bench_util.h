// Shared pieces for the benchmarks: instance files and summary statistics.
#ifndef NPUZZLE_BENCH_BENCH_UTIL_H_
#define NPUZZLE_BENCH_BENCH_UTIL_H_

#include <string>
#include <vector>

#include "engine/board.h"

namespace npuzzle::bench {

struct KorfInstance {
  int id;
  int optimal_length;
  Board start;  // goal: blank first (0 1 2 ... N-1)
};

// Reads korf100.txt or korf-taylor-24.txt from the test data directory.
std::vector<KorfInstance> LoadKorf(const std::string& file, int side);

double Median(std::vector<double> values);
double Mean(const std::vector<double>& values);

}  // namespace npuzzle::bench

#endif  // NPUZZLE_BENCH_BENCH_UTIL_H_
