#include "bench/bench_util.h"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>

namespace npuzzle::bench {

std::vector<KorfInstance> LoadKorf(const std::string& file, int side) {
  std::ifstream in(std::string(NPUZZLE_DATA_DIR) + "/" + file);
  std::vector<KorfInstance> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    KorfInstance k;
    fields >> k.id >> k.optimal_length;
    std::vector<int> tiles(side * side);
    for (int& t : tiles) fields >> t;
    k.start = *Board::Create(side, side, tiles);
    out.push_back(std::move(k));
  }
  return out;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double Mean(const std::vector<double>& values) {
  return values.empty() ? 0 : std::accumulate(values.begin(), values.end(), 0.0) / values.size();
}

}  // namespace npuzzle::bench
