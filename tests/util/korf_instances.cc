#include "tests/util/korf_instances.h"

#include <fstream>
#include <sstream>

namespace npuzzle {

std::vector<KorfInstance> LoadKorfInstances(const std::string& file, int side) {
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

}  // namespace npuzzle
