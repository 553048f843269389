#include "engine/anytime/grid.h"

#include <bit>
#include <random>

namespace npuzzle {
namespace {

const std::vector<uint64_t>& ZobristKeys() {
  static const std::vector<uint64_t>* keys = [] {
    auto* k = new std::vector<uint64_t>(kMaxGridCells * kMaxGridCells);
    std::mt19937_64 rng(0x9e3779b97f4a7c15ULL);
    for (uint64_t& v : *k) v = rng();
    return k;
  }();
  return *keys;
}

uint64_t Key(int tile, int cell) { return ZobristKeys()[static_cast<size_t>(tile) * kMaxGridCells + cell]; }

}  // namespace

uint64_t ZobristHash(const Grid& grid, const GridState& s) {
  uint64_t h = 0;
  for (int c = 0; c < grid.cells(); ++c) h ^= Key(s.at[c], c);
  return h;
}

uint64_t ZobristMove(int tile, int blank, int to) {
  return Key(tile, to) ^ Key(tile, blank) ^ Key(0, blank) ^ Key(0, to);
}

Grid::Grid(int rows, int cols) : rows_(rows), cols_(cols), neighbor_(static_cast<size_t>(rows * cols)) {
  for (int c = 0; c < cells(); ++c) {
    for (int d = 0; d < kNumDirs; ++d) {
      neighbor_[c][d] = static_cast<int16_t>(NeighborCell(rows, cols, c, static_cast<Dir>(d)));
    }
  }
}

GridState Grid::StateOf(const Board& board) const {
  GridState s;
  for (int c = 0; c < cells(); ++c) {
    s.at[c] = static_cast<uint8_t>(board.at(c));
    s.pos[board.at(c)] = static_cast<uint8_t>(c);
  }
  return s;
}

bool Grid::Same(const GridState& a, const GridState& b) const {
  return std::equal(a.at.begin(), a.at.begin() + cells(), b.at.begin());
}

bool Grid::Play(GridState& s, const std::vector<Dir>& moves) const {
  for (Dir d : moves) {
    const int to = Neighbor(s.blank(), d);
    if (to < 0) return false;
    s.MoveBlank(to);
  }
  return true;
}

GridHeuristic::GridHeuristic(const Grid& grid, const GridState& target)
    : grid_(&grid), target_(target), home_key_(2 * kMaxGridSide), line_cells_(2 * kMaxGridSide) {
  for (auto& keys : home_key_) keys.fill(-1);  // the blank belongs to no line
  for (int t = 1; t < grid.cells(); ++t) {
    const int goal = target.pos[t];
    home_key_[grid.Row(goal)][t] = static_cast<int8_t>(grid.Col(goal));
    home_key_[kMaxGridSide + grid.Col(goal)][t] = static_cast<int8_t>(grid.Row(goal));
  }
  for (int c = 0; c < grid.cells(); ++c) {
    line_cells_[grid.Row(c)].push_back(static_cast<uint8_t>(c));
    line_cells_[kMaxGridSide + grid.Col(c)].push_back(static_cast<uint8_t>(c));
  }
}

// The tiles of line `index` that must leave it and come back: members of the
// line (tiles whose target line it is) less the longest run in increasing
// target order, found by patience sorting with the pile tops as bits (keys
// are below 16). The line as it is after `moved_tile` goes from `from` to
// `to` (-1: as `s` has it).
int GridHeuristic::CountLine(const GridState& s, int index, int moved_tile, int from, int to) const {
  const std::array<int8_t, kMaxGridCells>& keys = home_key_[index];
  uint32_t tops = 0;
  int members = 0;
  for (uint8_t cell : line_cells_[index]) {
    const int t = cell == to ? moved_tile : cell == from ? 0 : s.at[cell];
    const int key = keys[t];
    if (key < 0) continue;
    const uint32_t above = tops & (~0u << key);
    tops = (tops & ~(above & (0u - above))) | (1u << key);
    ++members;
  }
  return members - std::popcount(tops);
}

GridHeuristic::Value GridHeuristic::Evaluate(const GridState& s, uint8_t* lines) const {
  Value v;
  for (int t = 1; t < grid_->cells(); ++t) v.manhattan += Manhattan(t, s.pos[t]);
  for (int r = 0; r < grid_->rows(); ++r) {
    lines[r] = static_cast<uint8_t>(CountLine(s, r, -1, -1, -1));
    v.conflicts += 2 * lines[r];
  }
  for (int c = 0; c < grid_->cols(); ++c) {
    lines[kMaxGridSide + c] = static_cast<uint8_t>(CountLine(s, kMaxGridSide + c, -1, -1, -1));
    v.conflicts += 2 * lines[kMaxGridSide + c];
  }
  return v;
}

GridHeuristic::Value GridHeuristic::Move(const GridState& s, Value v, uint8_t* lines, int to) const {
  const int from = s.blank();  // where the tile goes
  const int tile = s.at[to];
  v.manhattan += Manhattan(tile, from) - Manhattan(tile, to);
  // A vertical slide keeps the tile's column order; only its rows change,
  // and of those only one the tile belongs to: the order of a line's
  // members is all its count reads, and a tile passing through leaves that
  // as it was. So most moves recount no line.
  const bool vertical = grid_->Row(from) != grid_->Row(to);
  for (int index : vertical ? std::array<int, 2>{grid_->Row(from), grid_->Row(to)}
                            : std::array<int, 2>{kMaxGridSide + grid_->Col(from), kMaxGridSide + grid_->Col(to)}) {
    if (home_key_[index][tile] < 0) continue;
    const int now = CountLine(s, index, tile, to, from);
    v.conflicts += 2 * (now - lines[index]);
    lines[index] = static_cast<uint8_t>(now);
  }
  return v;
}

}  // namespace npuzzle
