#include "engine/anytime/beam.h"

#include <algorithm>
#include <random>
#include <thread>

#include "absl/container/flat_hash_set.h"

namespace npuzzle {
namespace {

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

struct Node {
  GridState s;
  GridHeuristic::Value value;
  std::array<uint8_t, 2 * kMaxGridSide> lines;
  uint64_t hash;
  uint8_t entry;  // the move that reached it; kNumDirs at the start
};

struct Candidate {
  uint32_t parent;
  uint8_t dir;
  int h;
  uint64_t hash;
  uint64_t tie;
};

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

}  // namespace

std::optional<std::vector<Dir>> BeamSearch(const Grid& grid, const GridHeuristic& heuristic, const GridState& start,
                                           const BeamOptions& options) {
  const int threads = std::max(1, options.threads);
  const size_t width = static_cast<size_t>(std::max(1, options.width));
  std::vector<Node> layer(1);
  layer[0].s = start;
  layer[0].value = heuristic.Evaluate(start, layer[0].lines.data());
  layer[0].hash = HashOf(grid, start);
  layer[0].entry = kNumDirs;
  if (layer[0].value.total() == 0) return std::vector<Dir>{};
  // For each depth, each node's parent index and move.
  std::vector<std::vector<std::pair<uint32_t, uint8_t>>> trace;
  absl::flat_hash_set<uint64_t> seen = {layer[0].hash};
  const uint64_t salt = options.seed * 0x9e3779b97f4a7c15ULL + 1;
  std::vector<std::vector<Candidate>> found(threads);
  for (int depth = 1;; ++depth) {
    if (options.bound > 0 && depth >= options.bound) return std::nullopt;
    if (options.stop && options.stop()) return std::nullopt;
    for (auto& part : found) part.clear();
    ForSlices(layer.size(), threads, [&](int slice, size_t begin, size_t end) {
      std::vector<Candidate>& out = found[slice];
      std::array<uint8_t, 2 * kMaxGridSide> lines;
      for (size_t i = begin; i < end; ++i) {
        const Node& n = layer[i];
        const int blank = n.s.blank();
        for (int d = 0; d < kNumDirs; ++d) {
          if (n.entry != kNumDirs && d == (n.entry ^ 1)) continue;
          const int to = grid.Neighbor(blank, static_cast<Dir>(d));
          if (to < 0) continue;
          lines = n.lines;
          const int h = heuristic.Move(n.s, n.value, lines.data(), to).total();
          if (options.bound > 0 && depth + h >= options.bound) continue;
          const int tile = n.s.at[to];
          const uint64_t hash = n.hash ^ Key(tile, to) ^ Key(tile, blank) ^ Key(0, blank) ^ Key(0, to);
          if (seen.contains(hash)) continue;
          out.push_back({static_cast<uint32_t>(i), static_cast<uint8_t>(d), h, hash, (hash ^ salt) * salt});
        }
      }
    });
    std::vector<Candidate> all;
    for (auto& part : found) all.insert(all.end(), part.begin(), part.end());
    if (options.expanded != nullptr) options.expanded->fetch_add(layer.size(), std::memory_order_relaxed);
    if (options.generated != nullptr) options.generated->fetch_add(all.size(), std::memory_order_relaxed);
    if (all.empty()) return std::nullopt;  // the beam died out
    auto better = [](const Candidate& a, const Candidate& b) { return a.h != b.h ? a.h < b.h : a.tie < b.tie; };
    // The best `width` distinct ones; a few more than that are sorted, as
    // duplicates take some of the places.
    const size_t keep = std::min(all.size(), width + width / 4 + 8);
    std::partial_sort(all.begin(), all.begin() + keep, all.end(), better);
    std::vector<Candidate> chosen;
    absl::flat_hash_set<uint64_t> taken;
    for (size_t i = 0; i < all.size() && chosen.size() < width; ++i) {
      if (i == keep) std::sort(all.begin() + keep, all.end(), better);
      if (taken.insert(all[i].hash).second) chosen.push_back(all[i]);
    }
    std::vector<Node> next(chosen.size());
    ForSlices(chosen.size(), threads, [&](int, size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const Candidate& c = chosen[i];
        const Node& parent = layer[c.parent];
        Node& child = next[i];
        child.s = parent.s;
        child.lines = parent.lines;
        const int to = grid.Neighbor(parent.s.blank(), static_cast<Dir>(c.dir));
        child.value = heuristic.Move(parent.s, parent.value, child.lines.data(), to);
        child.s.MoveBlank(to);
        child.hash = c.hash;
        child.entry = c.dir;
      }
    });
    std::vector<std::pair<uint32_t, uint8_t>> step(chosen.size());
    for (size_t i = 0; i < chosen.size(); ++i) {
      step[i] = {chosen[i].parent, chosen[i].dir};
      seen.insert(chosen[i].hash);
    }
    trace.push_back(std::move(step));
    layer = std::move(next);
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
