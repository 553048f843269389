#include "engine/anytime/beam.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <random>
#include <thread>

namespace npuzzle {
namespace {

// How many lookups ahead the table's slots are fetched.
constexpr size_t kPrefetchAhead = 16;

// A random word for each (tile, cell): a state's hash is the XOR of its
// tiles' words, so a move changes it by four XORs.
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

uint64_t HashOf(const Grid& grid, const GridState& s) {
  uint64_t h = 0;
  for (int c = 0; c < grid.cells(); ++c) h ^= Key(s.at[c], c);
  return h;
}

// A layer's node less its cells, which sit `cells` bytes each in one flat
// array beside: a GridState is 512 bytes whatever the board, and copying
// those, not the search, was what a wide beam spent its time on.
struct Node {
  GridHeuristic::Value value;
  uint64_t hash;
  std::array<uint8_t, 2 * kMaxGridSide> lines;
  uint8_t blank;
  uint8_t entry;  // the move that reached it; kNumDirs at the start
};

struct Candidate {
  uint64_t hash;
  uint32_t parent;
  int32_t h;
  uint8_t dir;
};

// The hashes of every state a beam has chosen: open addressing with linear
// probes, at most half full, 0 for an empty slot (a state's hash is kept
// odd, which costs one bit of 64). It must forget nothing: a beam that may
// come back to old states can cycle in a basin of the heuristic for ever,
// as a lossy table of 16 depths did on 12x12.
class SeenTable {
 public:
  SeenTable() : slots_(4096) {}
  static uint64_t Key(uint64_t hash) { return hash | 1; }
  bool Contains(uint64_t hash) const {
    const uint64_t key = Key(hash);
    for (size_t i = key & mask();; i = (i + 1) & mask()) {
      if (slots_[i] == key) return true;
      if (slots_[i] == 0) return false;
    }
  }
  // A wide beam's table is far larger than the cache: its lookups are
  // asked for ahead of need (see RemoveSeen).
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[Key(hash) & mask()]); }
  // False if it was there already.
  bool Insert(uint64_t hash) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    const uint64_t key = Key(hash);
    size_t i = key & mask();
    for (; slots_[i] != 0; i = (i + 1) & mask()) {
      if (slots_[i] == key) return false;
    }
    slots_[i] = key;
    ++size_;
    return true;
  }

 private:
  size_t mask() const { return slots_.size() - 1; }
  void Grow() {
    std::vector<uint64_t> old(2 * slots_.size());
    old.swap(slots_);
    for (uint64_t key : old) {
      if (key == 0) continue;
      size_t i = key & mask();
      while (slots_[i] != 0) i = (i + 1) & mask();
      slots_[i] = key;
    }
  }

  std::vector<uint64_t> slots_;
  size_t size_ = 0;
};

// Drops the candidates whose states the table holds, keeping the order.
// Each lookup is a cache miss in a wide beam (they were half its time one
// at a time), so the slots are fetched some candidates ahead.
void RemoveSeen(const SeenTable& seen, std::vector<Candidate>& candidates) {
  size_t kept = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i + kPrefetchAhead < candidates.size()) seen.Prefetch(candidates[i + kPrefetchAhead].hash);
    if (!seen.Contains(candidates[i].hash)) candidates[kept++] = candidates[i];
  }
  candidates.resize(kept);
}

// Runs f(slice, begin, end) over [0, n) split into up to `threads` slices,
// one a thread; small ranges stay on this thread, as slice 0.
template <class F>
void ForSlices(size_t n, int threads, F f) {
  if (threads <= 1 || n < 256) {
    f(0, 0, n);
    return;
  }
  std::vector<std::thread> pool;
  const size_t per = (n + threads - 1) / threads;
  for (int t = 1; t < threads; ++t) {
    const size_t begin = std::min(n, per * t), end = std::min(n, per * (t + 1));
    if (begin < end) pool.emplace_back([&f, t, begin, end] { f(t, begin, end); });
  }
  f(0, 0, std::min(n, per));
  for (std::thread& t : pool) t.join();
}

// Moves the best candidates (least h, then least tie) to the front of
// `all`: at least `count` of them if there are that many, those of the
// least values first; the rest follow in no order. h takes few values in
// one depth, so a count of each finds the last value taken, and only the
// candidates with that value need ranking among themselves, by a partial
// selection: linear, where sorting all of them was what a wide beam spent
// a third of its time on.
void BringBestForward(std::vector<Candidate>& all, size_t count, uint64_t salt) {
  if (all.size() <= count) return;
  auto [lo, hi] =
      std::minmax_element(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.h < b.h; });
  const int min_h = lo->h;
  std::vector<size_t> per_h(static_cast<size_t>(hi->h - min_h) + 1);
  for (const Candidate& c : all) ++per_h[c.h - min_h];
  int cut = min_h;
  size_t below = 0;
  for (; below + per_h[cut - min_h] < count; ++cut) below += per_h[cut - min_h];
  const auto at_cut = std::partition(all.begin(), all.end(), [cut](const Candidate& c) { return c.h < cut; });
  const auto after_cut = std::partition(at_cut, all.end(), [cut](const Candidate& c) { return c.h == cut; });
  auto tie = [salt](const Candidate& c) { return (c.hash ^ salt) * salt; };
  std::nth_element(at_cut, at_cut + (count - below), after_cut,
                   [&tie](const Candidate& a, const Candidate& b) { return tie(a) < tie(b); });
}

}  // namespace

uint64_t BeamBytes(const Grid& grid, uint64_t width, int depth) {
  // Each depth adds a trace entry a place, and a seen hash whose table is
  // at most half full, and briefly twice that while it grows.
  const uint64_t per_depth = sizeof(std::pair<uint32_t, uint8_t>) + 6 * sizeof(uint64_t);
  const uint64_t per_node = 2 * (grid.cells() + sizeof(Node)) + 4 * sizeof(Candidate);
  return width * (per_node + static_cast<uint64_t>(depth) * per_depth);
}

std::optional<std::vector<Dir>> BeamSearch(const Grid& grid, const GridHeuristic& heuristic, const GridState& start,
                                           const BeamOptions& options) {
  const int threads = std::max(1, options.threads);
  const size_t width = static_cast<size_t>(std::max(1, options.width));
  const size_t cells = static_cast<size_t>(grid.cells());
  std::vector<Node> layer(1);
  std::vector<uint8_t> layer_cells(start.at.begin(), start.at.begin() + cells);
  layer[0].value = heuristic.Evaluate(start, layer[0].lines.data());
  layer[0].hash = HashOf(grid, start);
  layer[0].blank = static_cast<uint8_t>(start.blank());
  layer[0].entry = kNumDirs;
  if (layer[0].value.total() == 0) return std::vector<Dir>{};
  // For each depth, each node's parent index and move.
  std::vector<std::vector<std::pair<uint32_t, uint8_t>>> trace;
  SeenTable seen;
  seen.Insert(layer[0].hash);
  const uint64_t salt = options.seed * 0x9e3779b97f4a7c15ULL + 1;
  std::vector<std::vector<Candidate>> found(threads);
  // A node as the heuristic sees it: its cells and where the blank is (the
  // heuristic reads nothing else, and MoveBlank writes only these).
  auto load = [&](GridState& s, size_t i) {
    std::memcpy(s.at.data(), &layer_cells[i * cells], cells);
    s.pos[0] = layer[i].blank;
  };
  for (int depth = 1;; ++depth) {
    if (options.bound > 0 && depth >= options.bound) return std::nullopt;
    if (options.stop && options.stop()) return std::nullopt;
    for (auto& part : found) part.clear();
    ForSlices(layer.size(), threads, [&](int slice, size_t begin, size_t end) {
      std::vector<Candidate>& out = found[slice];
      GridState s;
      Tiles tiles;  // the tables' view of the parent (they read every tile's cell)
      std::array<uint8_t, 2 * kMaxGridSide> lines;
      for (size_t i = begin; i < end; ++i) {
        const Node& n = layer[i];
        load(s, i);
        if (options.tables != nullptr) {
          for (size_t c = 0; c < cells; ++c) {
            tiles.at[c] = s.at[c];
            tiles.pos[s.at[c]] = static_cast<uint8_t>(c);
          }
        }
        for (int d = 0; d < kNumDirs; ++d) {
          if (n.entry != kNumDirs && d == (n.entry ^ 1)) continue;
          const int to = grid.Neighbor(n.blank, static_cast<Dir>(d));
          if (to < 0) continue;
          lines = n.lines;
          int h = heuristic.Move(s, n.value, lines.data(), to).total();
          if (options.tables != nullptr) {
            tiles.MoveBlank(n.blank, to);
            h = std::max(h, PatternDatabase::Value(options.tables->Start(tiles)));
            tiles.MoveBlank(to, n.blank);
          }
          if (options.bound > 0 && depth + h >= options.bound) continue;
          const int tile = s.at[to];
          const uint64_t hash = n.hash ^ Key(tile, to) ^ Key(tile, n.blank) ^ Key(0, n.blank) ^ Key(0, to);
          out.push_back({hash, static_cast<uint32_t>(i), h, static_cast<uint8_t>(d)});
        }
      }
      RemoveSeen(seen, out);
    });
    std::vector<Candidate> all;
    for (auto& part : found) all.insert(all.end(), part.begin(), part.end());
    if (options.expanded != nullptr) options.expanded->fetch_add(layer.size(), std::memory_order_relaxed);
    if (options.generated != nullptr) options.generated->fetch_add(all.size(), std::memory_order_relaxed);
    if (all.empty()) return std::nullopt;  // the beam died out
    // The best `width` distinct ones; a few more than that are brought
    // forward, as duplicates take some of the places.
    BringBestForward(all, width + width / 4 + 8, salt);
    std::vector<Candidate> chosen;
    for (size_t i = 0; i < all.size() && chosen.size() < width; ++i) {
      if (i + kPrefetchAhead < all.size()) seen.Prefetch(all[i + kPrefetchAhead].hash);
      if (seen.Insert(all[i].hash)) chosen.push_back(all[i]);
    }
    std::vector<Node> next(chosen.size());
    std::vector<uint8_t> next_cells(chosen.size() * cells);
    ForSlices(chosen.size(), threads, [&](int, size_t begin, size_t end) {
      GridState s;
      for (size_t i = begin; i < end; ++i) {
        const Candidate& c = chosen[i];
        const Node& parent = layer[c.parent];
        load(s, c.parent);
        Node& child = next[i];
        child.lines = parent.lines;
        const int to = grid.Neighbor(parent.blank, static_cast<Dir>(c.dir));
        child.value = heuristic.Move(s, parent.value, child.lines.data(), to);
        s.MoveBlank(to);
        std::memcpy(&next_cells[i * cells], s.at.data(), cells);
        child.hash = c.hash;
        child.blank = static_cast<uint8_t>(to);
        child.entry = c.dir;
      }
    });
    std::vector<std::pair<uint32_t, uint8_t>> step(chosen.size());
    for (size_t i = 0; i < chosen.size(); ++i) step[i] = {chosen[i].parent, chosen[i].dir};
    trace.push_back(std::move(step));
    layer = std::move(next);
    layer_cells = std::move(next_cells);
    const auto goal = std::find_if(chosen.begin(), chosen.end(), [](const Candidate& c) { return c.h == 0; });
    if (goal != chosen.end()) {
      // Manhattan distance 0 to the target is the target.
      std::vector<Dir> path(trace.size());
      uint32_t index = static_cast<uint32_t>(goal - chosen.begin());
      for (size_t d = trace.size(); d-- > 0;) {
        path[d] = static_cast<Dir>(trace[d][index].second);
        index = trace[d][index].first;
      }
      return path;
    }
  }
}

}  // namespace npuzzle
