#include "engine/anytime/staged.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace npuzzle {
namespace {

// Moving a tile one cell, once the blank is beside it, costs 5 moves (the
// blank circles to its far side and swaps), 3 round a corner. Counting 4 a
// cell makes the placements' A* nearly greedy (it is no longer a lower
// bound), which keeps each to a few hundred states instead of every
// blank-and-tile pair in the box: measured on a random 16x16 board, the
// first answer took 23 ms instead of 5.3 s and was 0.1% longer (on 9x9,
// 9% longer; the beams that follow shorten it far more).
constexpr int kTileStep = 4;

// About how many moves bring the tile of `cell` home from where it is in
// `s`: the blank's way to it, then a tile step a cell.
int PlacingCost(const Grid& grid, const GridState& s, const GridState& target, int cell) {
  const int at = s.pos[target.at[cell]];
  return grid.Distance(s.blank(), at) + kTileStep * grid.Distance(at, cell);
}

// The part of the board not yet solved: rows [r0, r1), columns [c0, c1).
struct Region {
  int r0, r1, c0, c1;
  int rows() const { return r1 - r0; }
  int cols() const { return c1 - c0; }
};

class LinePlacer {
 public:
  LinePlacer(const Grid& grid, const GridState& target) : grid_(grid), target_(target), frozen_(grid.cells()) {}

  void Freeze(int cell) { frozen_[cell] = true; }

  // Moves `s` until every tile of `tiles` (one or two) is on its target
  // cell, without moving a frozen cell; appends the moves to `path`.
  //
  // One tile goes home by the tidy beam below. Two (or one the beam cannot
  // place) go by an A* over the positions of the blank and those tiles (a
  // state is their three cells, a byte each), whose heuristic is the
  // tiles' Manhattan distance plus what the blank must travel before any
  // of them can move.
  bool Place(GridState& s, const std::vector<int>& tiles, std::vector<Dir>* path) {
    if (tiles.size() == 1 && PlaceTidily(s, tiles[0], path)) return true;
    if (SetBox(s, tiles); PlaceWithin(s, tiles, path)) return true;
    box_ = {0, grid_.rows(), 0, grid_.cols()};
    return PlaceWithin(s, tiles, path);
  }

 private:
  // Both searches keep to the box around the blank, the tiles and their
  // targets, widened by two cells: on a large board the whole region has
  // millions of blank-and-tile states, and a box two cells wider than the
  // tiles' way always holds a path (a tile moves along a row or column with
  // the blank circling it in a 2-cell-wide band). Should it hold none, the
  // whole region is searched, so no placement fails for the box's sake.
  void SetBox(const GridState& s, const std::vector<int>& tiles) {
    int r0 = grid_.Row(s.blank()), r1 = r0, c0 = grid_.Col(s.blank()), c1 = c0;
    for (int tile : tiles) {
      for (int cell : {s.pos[tile], target_.pos[tile]}) {
        r0 = std::min(r0, grid_.Row(cell)), r1 = std::max(r1, grid_.Row(cell));
        c0 = std::min(c0, grid_.Col(cell)), c1 = std::max(c1, grid_.Col(cell));
      }
    }
    constexpr int kMargin = 2;
    box_ = {r0 - kMargin, r1 + kMargin, c0 - kMargin, c1 + kMargin};
  }

  // The exact number of moves that bring `tile` home from each (blank,
  // tile) pair of open cells, every other tile being interchangeable: a
  // breadth-first search back from the pairs with the tile home (a move
  // undoes by the opposite move, so the graph is undirected).
  void PlacingDistances(int tile) {
    local_.assign(grid_.cells(), -1);
    open_cells_.clear();
    for (int c = 0; c < grid_.cells(); ++c) {
      if (Open(c)) local_[c] = static_cast<int>(open_cells_.size()), open_cells_.push_back(c);
    }
    const size_t n = open_cells_.size();
    // Neighbours by local index, so the search below touches no board cell.
    local_neighbors_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      for (int d = 0; d < kNumDirs; ++d) {
        const int to = grid_.Neighbor(open_cells_[i], static_cast<Dir>(d));
        local_neighbors_[i][d] = static_cast<int16_t>(to < 0 ? -1 : local_[to]);
      }
    }
    distance_.assign(n * n, kFar);
    // A pair is queued as its two local indexes, a byte each (a box has at
    // most 256 cells), so no step divides to recover them.
    queue_.clear();
    const int home = local_[target_.pos[tile]];
    for (size_t b = 0; b < n; ++b) {
      if (static_cast<int>(b) == home) continue;
      distance_[b * n + home] = 0;
      queue_.push_back(static_cast<uint16_t>(b << 8 | home));
    }
    for (size_t i = 0; i < queue_.size(); ++i) {
      const int b = queue_[i] >> 8, p = queue_[i] & 0xff;
      const uint16_t next_distance = distance_[b * n + p] + 1;
      for (int d = 0; d < kNumDirs; ++d) {
        const int to = local_neighbors_[b][d];
        if (to < 0) continue;
        const int at = to == p ? b : p;
        uint16_t& distance = distance_[to * n + at];
        if (distance != kFar) continue;
        distance = next_distance;
        queue_.push_back(static_cast<uint16_t>(to << 8 | at));
      }
    }
  }
  int PlacingDistance(int blank, int at) const {
    return distance_[static_cast<size_t>(local_[blank]) * open_cells_.size() + local_[at]];
  }

  // A beam over whole states toward `tile` at home, ranked by the exact
  // moves left to place it (PlacingDistances) plus the Manhattan distance
  // of every other tile. Most moves of a placement are the blank circling
  // the tile, and which way it circles, or which of the many equally short
  // ways the tile takes, moves other tiles nearer home or farther; the
  // A* took whichever it met first. Ranked this way, the beam takes a
  // slightly longer way only where it brings as many other tiles a step
  // nearer home. Measured over 10 random boards each, the answers by lines
  // came out 3.15 -> 2.63 times the Manhattan + linear-conflict bound on
  // 9x9, 3.28 -> 2.71 on 12x12 and 3.43 -> 2.66 on 16x16 (45 ms a board,
  // against 20 ms). Counting the placing distance twice gave 2.76-2.82;
  // width 64 gained 0.02-0.05 for twice the time, and width 4 lost 0.07.
  // The first depth at which the tile is home ends it (a beam that gets
  // nowhere within twice the placing distance and 50 moves gives up, and
  // the A* places the tile instead).
  bool PlaceTidily(GridState& s, int tile, std::vector<Dir>* path) {
    SetBox(s, {tile});
    PlacingDistances(tile);
    if (PlacingDistance(s.blank(), s.pos[tile]) == kFar) {
      box_ = {0, grid_.rows(), 0, grid_.cols()};
      PlacingDistances(tile);
    }
    const int first = PlacingDistance(s.blank(), s.pos[tile]);
    if (first == kFar) return false;
    if (first == 0) return true;
    int others = 0;
    for (int t = 1; t < grid_.cells(); ++t) {
      if (t != tile) others += grid_.Distance(s.pos[t], target_.pos[t]);
    }
    // The buffers live across placements, the seen set is sized once and
    // candidates compare as two integers: a board's lines make thousands
    // of beam layers, and fresh buffers for each, grown as they filled,
    // and comparisons through tuples took half of a 16x16 board's lines
    // under ASan (300 -> 160 ms a board; 43 -> 35 ms without it), where
    // the sanitizer stage holds the first answer to the job's second.
    layer_.assign(1, {s, ZobristHash(grid_, s), others, kNumDirs});
    trail_.clear();
    absl::flat_hash_set<uint64_t> seen;
    seen.reserve(kTidyWidth * (2 * first + 51) + 1);
    seen.insert(layer_[0].hash);
    for (int depth = 1; depth <= 2 * first + 50; ++depth) {
      candidates_.clear();
      for (uint32_t i = 0; i < layer_.size(); ++i) {
        const TidyNode& n = layer_[i];
        const int blank = n.s.blank();
        for (int d = 0; d < kNumDirs; ++d) {
          if (n.entry != kNumDirs && d == (n.entry ^ 1)) continue;
          const int to = grid_.Neighbor(blank, static_cast<Dir>(d));
          if (to < 0 || local_[to] < 0) continue;
          const int moved = n.s.at[to];
          const uint64_t hash = n.hash ^ ZobristMove(moved, blank, to);
          if (seen.contains(hash)) continue;
          const int distance = PlacingDistance(to, moved == tile ? blank : n.s.pos[tile]);
          const int o = moved == tile ? n.others
                                      : n.others + grid_.Distance(blank, target_.pos[moved]) -
                                            grid_.Distance(to, target_.pos[moved]);
          const uint64_t rank = static_cast<uint64_t>(distance != 0) << 32 | static_cast<uint32_t>(distance + o);
          candidates_.push_back({rank, distance, o, i, static_cast<uint8_t>(d), hash});
        }
      }
      if (candidates_.empty()) return false;
      std::sort(candidates_.begin(), candidates_.end(), [](const TidyCandidate& a, const TidyCandidate& b) {
        return std::tie(a.rank, a.hash) < std::tie(b.rank, b.hash);
      });
      if (candidates_[0].distance == 0) {
        // trail_ holds kTidyWidth steps a layer, the parents' layer first.
        std::vector<Dir> moves{static_cast<Dir>(candidates_[0].dir)};
        for (uint32_t i = candidates_[0].parent, k = static_cast<uint32_t>(trail_.size() / kTidyWidth); k-- > 0;) {
          const TidyStep& step = trail_[k * kTidyWidth + i];
          moves.push_back(static_cast<Dir>(step.dir));
          i = step.parent;
        }
        std::reverse(moves.begin(), moves.end());
        grid_.Play(s, moves);
        path->insert(path->end(), moves.begin(), moves.end());
        return true;
      }
      next_.clear();
      for (const TidyCandidate& c : candidates_) {
        if (next_.size() == kTidyWidth) break;
        if (!seen.insert(c.hash).second) continue;
        TidyNode n = layer_[c.parent];
        n.s.MoveBlank(grid_.Neighbor(n.s.blank(), static_cast<Dir>(c.dir)));
        n.hash = c.hash;
        n.others = c.others;
        n.entry = c.dir;
        next_.push_back(n);
        trail_.push_back({c.parent, c.dir});
      }
      trail_.resize(trail_.size() + kTidyWidth - next_.size());
      std::swap(layer_, next_);
    }
    return false;
  }

  struct TidyNode {
    GridState s;
    uint64_t hash;
    int others;  // the other tiles' Manhattan distance
    uint8_t entry;
  };
  struct TidyCandidate {
    uint64_t rank;  // a placing first, then the least distance plus others
    int distance;
    int others;
    uint32_t parent;
    uint8_t dir;
    uint64_t hash;
  };
  struct TidyStep {
    uint32_t parent;
    uint8_t dir;
  };
  std::vector<TidyNode> layer_, next_;
  std::vector<TidyCandidate> candidates_;
  std::vector<TidyStep> trail_;

  static constexpr uint16_t kFar = 0xffff;
  static constexpr size_t kTidyWidth = 16;
  std::vector<int> local_;
  std::vector<int> open_cells_;
  std::vector<uint16_t> distance_;
  std::vector<std::array<int16_t, kNumDirs>> local_neighbors_;
  std::vector<uint16_t> queue_;

  bool Open(int cell) const {
    const int r = grid_.Row(cell), c = grid_.Col(cell);
    return !frozen_[cell] && r >= box_.r0 && r <= box_.r1 && c >= box_.c0 && c <= box_.c1;
  }

  bool PlaceWithin(GridState& s, const std::vector<int>& tiles, std::vector<Dir>* path) {
    const int k = static_cast<int>(tiles.size());
    auto key_of = [&](int blank, const std::array<int, 2>& at) {
      return static_cast<uint32_t>(blank | at[0] << 8 | (k > 1 ? at[1] : 0) << 16);
    };
    auto h_of = [&](int blank, const std::array<int, 2>& at) {
      int h = 0;
      int reach = INT_MAX;
      for (int i = 0; i < k; ++i) {
        const int goal = target_.pos[tiles[i]];
        h += kTileStep * grid_.Distance(at[i], goal);
        if (at[i] != goal) reach = std::min(reach, grid_.Distance(blank, at[i]) - 1);
      }
      return h + (reach == INT_MAX ? 0 : reach);
    };
    std::array<int, 2> at0{};
    for (int i = 0; i < k; ++i) at0[i] = s.pos[tiles[i]];
    const uint32_t start = key_of(s.blank(), at0);
    struct Seen {
      uint32_t parent;
      uint8_t dir;
      int g;
    };
    absl::flat_hash_map<uint32_t, Seen> seen;
    // (f, -g, key): lowest f, and of those the deepest, first.
    using Entry = std::tuple<int, int, uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> open;
    seen[start] = {start, 0, 0};
    open.emplace(h_of(s.blank(), at0), 0, start);
    while (!open.empty()) {
      const auto [f, minus_g, key] = open.top();
      open.pop();
      const int g = -minus_g;
      if (seen[key].g != g) continue;  // reached more cheaply since
      const int blank = static_cast<int>(key & 0xff);
      std::array<int, 2> at{static_cast<int>(key >> 8 & 0xff), static_cast<int>(key >> 16 & 0xff)};
      bool done = true;
      for (int i = 0; i < k; ++i) done = done && at[i] == target_.pos[tiles[i]];
      if (done) {
        std::vector<Dir> moves;
        for (uint32_t node = key; node != start; node = seen[node].parent)
          moves.push_back(static_cast<Dir>(seen[node].dir));
        std::reverse(moves.begin(), moves.end());
        grid_.Play(s, moves);
        path->insert(path->end(), moves.begin(), moves.end());
        return true;
      }
      for (int d = 0; d < kNumDirs; ++d) {
        const int to = grid_.Neighbor(blank, static_cast<Dir>(d));
        if (to < 0 || !Open(to)) continue;
        std::array<int, 2> next = at;
        for (int i = 0; i < k; ++i) {
          if (next[i] == to) next[i] = blank;
        }
        const uint32_t child = key_of(to, next);
        auto [it, added] = seen.try_emplace(child, Seen{key, static_cast<uint8_t>(d), g + 1});
        if (!added) {
          if (it->second.g <= g + 1) continue;
          it->second = {key, static_cast<uint8_t>(d), g + 1};
        }
        open.emplace(g + 1 + h_of(to, next), -(g + 1), child);
      }
    }
    return false;  // with the whole region open, cannot happen: it is at least 2 wide
  }

 public:
  // Solves the rest exactly: IDA* over the unfrozen cells with Manhattan
  // distance (at most 3x3, so at most 31 moves and a few thousand nodes).
  bool Finish(GridState& s, std::vector<Dir>* path) {
    int h = 0;
    for (int t = 1; t < grid_.cells(); ++t) h += grid_.Distance(s.pos[t], target_.pos[t]);
    std::vector<Dir> moves;
    for (int bound = h;; bound += 2) {
      if (bound > 64) return false;
      if (Dfs(s, h, 0, bound, kNumDirs, &moves)) break;
    }
    path->insert(path->end(), moves.begin(), moves.end());
    return true;
  }

 private:
  bool Dfs(GridState& s, int h, int g, int bound, int entry, std::vector<Dir>* moves) {
    if (h == 0) return true;
    if (g + h > bound) return false;
    const int blank = s.blank();
    for (int d = 0; d < kNumDirs; ++d) {
      if (entry != kNumDirs && d == (entry ^ 1)) continue;
      const int to = grid_.Neighbor(blank, static_cast<Dir>(d));
      if (to < 0 || frozen_[to]) continue;
      const int tile = s.at[to];
      const int child_h = h + grid_.Distance(blank, target_.pos[tile]) - grid_.Distance(to, target_.pos[tile]);
      s.MoveBlank(to);
      moves->push_back(static_cast<Dir>(d));
      if (Dfs(s, child_h, g + 1, bound, d, moves)) return true;
      moves->pop_back();
      s.MoveBlank(blank);
    }
    return false;
  }

  const Grid& grid_;
  const GridState& target_;
  std::vector<bool> frozen_;
  Region box_{};  // rows and columns, inclusive here, that Place may use
};

}  // namespace

std::optional<std::vector<Dir>> SolveByLines(const Grid& grid, const GridState& start, const GridState& target,
                                             const std::function<bool()>& stop) {
  GridState s = start;
  std::vector<Dir> path;
  LinePlacer placer(grid, target);
  Region region{0, grid.rows(), 0, grid.cols()};
  const int goal_blank = target.pos[0];
  while (region.rows() > 3 || region.cols() > 3) {
    // A row off the longer side (a column off a square's is as good), from
    // the end that does not hold the goal blank.
    std::vector<int> line;
    if (region.rows() >= region.cols()) {
      const int r = grid.Row(goal_blank) == region.r0 ? region.r1 - 1 : region.r0;
      for (int c = region.c0; c < region.c1; ++c) line.push_back(r * grid.cols() + c);
      (r == region.r0 ? region.r0 : region.r1) += r == region.r0 ? 1 : -1;
    } else {
      const int c = grid.Col(goal_blank) == region.c0 ? region.c1 - 1 : region.c0;
      for (int r = region.r0; r < region.r1; ++r) line.push_back(r * grid.cols() + c);
      (c == region.c0 ? region.c0 : region.c1) += c == region.c0 ? 1 : -1;
    }
    // The line's open cells stay one run, [lo, hi]: a cell left open
    // between two fixed ones could be entered only from the side, by a
    // blank that then cannot bring a tile in. Each step fixes whichever
    // end's tile is nearer (with the blank's way to it), and the last
    // two go in together, wherever they meet: measured over 10 random
    // boards, the first answer came out 1.7% shorter on 9x9, 1.2% on
    // 12x12 and 2.4% on 16x16 than filling each line from one end.
    size_t lo = 0, hi = line.size() - 1;
    for (;;) {
      if (stop()) return std::nullopt;
      std::vector<size_t> places = {lo, hi};
      if (hi - lo > 1)
        places = {PlacingCost(grid, s, target, line[lo]) <= PlacingCost(grid, s, target, line[hi]) ? lo : hi};
      std::vector<int> tiles;
      for (size_t j : places) tiles.push_back(target.at[line[j]]);
      if (!placer.Place(s, tiles, &path)) return std::nullopt;
      for (size_t j : places) placer.Freeze(line[j]);
      if (places.size() == 2) break;
      places[0] == lo ? ++lo : --hi;
    }
  }
  if (!placer.Finish(s, &path)) return std::nullopt;
  return path;
}

}  // namespace npuzzle
