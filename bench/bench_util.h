// Shared pieces for the benchmarks: summary statistics.
#ifndef NPUZZLE_BENCH_BENCH_UTIL_H_
#define NPUZZLE_BENCH_BENCH_UTIL_H_

#include <string>
#include <vector>

#include "tests/util/korf_instances.h"

namespace npuzzle::bench {

double Median(std::vector<double> values);
double Mean(const std::vector<double>& values);

}  // namespace npuzzle::bench

#endif  // NPUZZLE_BENCH_BENCH_UTIL_H_
