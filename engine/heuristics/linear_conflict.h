// Manhattan distance plus linear conflicts. Among the tiles that sit in
// their goal row, those whose goal columns are out of order must leave the
// row and come back: at least (count - longest increasing run) of them, two
// extra vertical moves each. The same holds for columns with horizontal
// moves, so rows and columns add up and the sum stays admissible (and
// consistent: one move lowers it by at most one). Per-line counts ride in
// the Node, so a move recounts only the two lines the tile leaves and
// enters.
#ifndef NPUZZLE_ENGINE_HEURISTICS_LINEAR_CONFLICT_H_
#define NPUZZLE_ENGINE_HEURISTICS_LINEAR_CONFLICT_H_

#include <array>
#include <bit>
#include <cstdint>

#include "engine/heuristics/manhattan.h"
#include "engine/puzzle.h"

namespace npuzzle {

class LinearConflict {
 public:
  struct Node {
    int16_t manhattan = 0;
    int16_t conflicts = 0;
    std::array<uint8_t, 2 * kMaxSide> line{};  // rows, then columns
  };

  explicit LinearConflict(const Puzzle& puzzle) : puzzle_(&puzzle), manhattan_(puzzle) {
    for (auto& keys : home_key_) keys.fill(-1);  // the blank belongs to no line
    for (int t = 1; t < puzzle.cells(); ++t) {
      const int goal = puzzle.GoalCell(t);
      home_key_[puzzle.Row(goal)][t] = static_cast<int8_t>(puzzle.Col(goal));
      home_key_[kMaxSide + puzzle.Col(goal)][t] = static_cast<int8_t>(puzzle.Row(goal));
    }
    for (int c = 0; c < puzzle.cells(); ++c) {
      Line& row = lines_[puzzle.Row(c)];
      row.cells[row.length++] = static_cast<uint8_t>(c);
      Line& col = lines_[kMaxSide + puzzle.Col(c)];
      col.cells[col.length++] = static_cast<uint8_t>(c);
    }
  }

  Node Start(const Tiles& s) const {
    Node n;
    n.manhattan = static_cast<int16_t>(manhattan_.Start(s));
    for (int r = 0; r < puzzle_->rows(); ++r) Recount(s, &n, r, -1, -1, -1);
    for (int c = 0; c < puzzle_->cols(); ++c) Recount(s, &n, kMaxSide + c, -1, -1, -1);
    return n;
  }

  Node Move(const Tiles& s, const Node& n, int tile, int from, int to) const {
    Node m = n;
    m.manhattan = static_cast<int16_t>(manhattan_.Move(s, n.manhattan, tile, from, to));
    // A vertical slide keeps the tile's column order; only rows change.
    if (puzzle_->Row(from) != puzzle_->Row(to)) {
      Recount(s, &m, puzzle_->Row(from), tile, from, to);
      Recount(s, &m, puzzle_->Row(to), tile, from, to);
    } else {
      Recount(s, &m, kMaxSide + puzzle_->Col(from), tile, from, to);
      Recount(s, &m, kMaxSide + puzzle_->Col(to), tile, from, to);
    }
    return m;
  }

  static int Value(const Node& n) { return n.manhattan + 2 * n.conflicts; }

 private:
  struct Line {
    uint8_t length = 0;
    std::array<uint8_t, kMaxSide> cells{};
  };

  // Recounts line `index` (rows first, columns from kMaxSide) of `s` as it
  // is after `tile` slides from `from` to `to` (-1s: `s` as it is), and
  // updates the node's total. The longest increasing run is patience
  // sorting with the pile tops kept as bits: a key replaces the smallest
  // top above it, or starts a new pile.
  void Recount(const Tiles& s, Node* n, int index, int tile, int from, int to) const {
    const Line& line = lines_[index];
    uint32_t tops = 0;
    int members = 0;
    for (int i = 0; i < line.length; ++i) {
      const int cell = line.cells[i];
      const int t = cell == to ? tile : cell == from ? 0 : s.at[cell];
      const int key = home_key_[index][t];
      // Branch-free: about half the cells hold no member of the line.
      const bool member = key >= 0;
      const uint32_t above = tops & (~0u << (key & 31));
      const uint32_t placed = (tops & ~(above & (0u - above))) | (1u << (key & 31));
      tops = member ? placed : tops;
      members += member;
    }
    const int now = members - std::popcount(tops);
    n->conflicts = static_cast<int16_t>(n->conflicts + now - n->line[index]);
    n->line[index] = static_cast<uint8_t>(now);
  }

  const Puzzle* puzzle_;
  Manhattan manhattan_;
  // For each line and tile: the tile's place along that line if the line
  // is its goal row or column, else -1.
  std::array<std::array<int8_t, kMaxCells>, 2 * kMaxSide> home_key_{};
  std::array<Line, 2 * kMaxSide> lines_{};
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTICS_LINEAR_CONFLICT_H_
