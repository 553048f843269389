#include "engine/move_pruning.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "engine/board.h"

namespace npuzzle {
namespace {

constexpr int kRowStep[kNumDirs] = {-1, 1, 0, 0};
constexpr int kColStep[kNumDirs] = {0, 0, -1, 1};

// Cells of an unbounded grid, relative to where the blank starts; a
// sequence of at most 64 moves stays inside.
using Cell = uint16_t;
Cell MakeCell(int row, int col) { return static_cast<Cell>(((row + 64) << 7) | (col + 64)); }
const Cell kOrigin = MakeCell(0, 0);

// The cells the blank has crossed, relative to its start.
struct Footprint {
  int top = 0, bottom = 0, left = 0, right = 0;
  bool Within(const Footprint& o) const {
    return top >= o.top && bottom <= o.bottom && left >= o.left && right <= o.right;
  }
};

// A move sequence and what it does: where the blank is, and for each cell
// whose content changed, the cell its content started on (the blank's
// start cell, kOrigin, for the blank), sorted by cell.
struct Sequence {
  std::string moves;
  int row = 0, col = 0;
  std::vector<std::pair<Cell, Cell>> moved;
  Footprint footprint;

  Cell ContentOf(Cell cell) const {
    auto it = std::lower_bound(moved.begin(), moved.end(), std::make_pair(cell, Cell{0}));
    return it != moved.end() && it->first == cell ? it->second : cell;
  }
  void SetContent(Cell cell, Cell content) {
    auto it = std::lower_bound(moved.begin(), moved.end(), std::make_pair(cell, Cell{0}));
    const bool present = it != moved.end() && it->first == cell;
    if (content == cell) {
      if (present) moved.erase(it);
    } else if (present) {
      it->second = content;
    } else {
      moved.insert(it, {cell, content});
    }
  }
  Sequence Then(int d) const {
    Sequence next = *this;
    next.moves.push_back(static_cast<char>(d));
    const Cell from = MakeCell(row, col);
    next.row += kRowStep[d];
    next.col += kColStep[d];
    const Cell to = MakeCell(next.row, next.col);
    const Cell tile = ContentOf(to);
    next.SetContent(from, tile);
    next.SetContent(to, kOrigin);
    Footprint& f = next.footprint;
    f.top = std::min(f.top, next.row);
    f.bottom = std::max(f.bottom, next.row);
    f.left = std::min(f.left, next.col);
    f.right = std::max(f.right, next.col);
    return next;
  }
  // Equal for equivalent sequences: the blank's place and every moved tile.
  std::string Effect() const {
    std::string key(reinterpret_cast<const char*>(moved.data()), moved.size() * sizeof(moved[0]));
    key.push_back(static_cast<char>(row));
    key.push_back(static_cast<char>(col));
    return key;
  }
};

// The minimal sequences to reject, found breadth-first in U < D < L < R
// order, so that every sequence met before another of the same length is
// earlier in that order.
std::optional<std::vector<std::string>> PrunedSequences(int rows, int cols, int max_length,
                                                        const std::function<bool()>& stop) {
  constexpr uint64_t kSequencesPerCheck = 4096;
  uint64_t made = 0;
  std::vector<std::string> pruned;
  absl::flat_hash_set<std::string> pruned_set;
  absl::flat_hash_map<std::string, std::vector<Footprint>> kept;  // by effect
  std::vector<Sequence> level(1);
  kept[level[0].Effect()].push_back(level[0].footprint);
  for (int length = 1; length <= max_length && !level.empty(); ++length) {
    std::vector<Sequence> next_level;
    for (const Sequence& parent : level) {
      for (int d = 0; d < kNumDirs; ++d) {
        if (stop && ++made % kSequencesPerCheck == 0 && stop()) return std::nullopt;
        Sequence s = parent.Then(d);
        const Footprint& f = s.footprint;
        if (f.bottom - f.top >= rows || f.right - f.left >= cols) continue;  // never legal here
        bool contains_pruned = false;
        for (size_t i = 1; i + 1 < s.moves.size() && !contains_pruned; ++i) {
          contains_pruned = pruned_set.contains(absl::string_view(s.moves).substr(i));
        }
        if (contains_pruned) continue;
        std::vector<Footprint>& equivalents = kept[s.Effect()];
        const bool dominated =
            std::any_of(equivalents.begin(), equivalents.end(), [&](const Footprint& e) { return e.Within(f); });
        if (dominated) {
          pruned.push_back(s.moves);
          pruned_set.insert(s.moves);
          continue;
        }
        equivalents.push_back(f);
        next_level.push_back(std::move(s));
      }
    }
    level = std::move(next_level);
  }
  return pruned;
}

}  // namespace

// An Aho-Corasick automaton over the pruned sequences: its state is the
// longest suffix of the moves so far that begins some pruned sequence, and
// a state whose suffixes include a whole one is where pruning happens.
std::optional<MovePruning> MovePruning::Build(int rows, int cols, int max_length, const std::function<bool()>& stop) {
  const std::optional<std::vector<std::string>> pruned = PrunedSequences(rows, cols, max_length, stop);
  if (!pruned) return std::nullopt;
  const std::vector<std::string>& sequences = *pruned;
  std::vector<std::array<int32_t, kNumDirs>> child(1);
  child[0].fill(-1);
  std::vector<bool> ends(1, false);
  for (const std::string& s : sequences) {
    int node = 0;
    for (char c : s) {
      if (child[node][c] < 0) {
        child[node][c] = static_cast<int32_t>(child.size());
        child.emplace_back().fill(-1);
        ends.push_back(false);
      }
      node = child[node][c];
    }
    ends[node] = true;
  }

  // Breadth-first, so that a node's fallback is complete before its own.
  std::vector<std::array<int32_t, kNumDirs>> go(child.size());
  std::vector<int32_t> fallback(child.size(), 0);
  std::vector<int32_t> order;
  std::deque<int32_t> queue = {0};
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    order.push_back(u);
    for (int d = 0; d < kNumDirs; ++d) {
      const int v = child[u][d];
      if (v < 0) {
        go[u][d] = u == 0 ? 0 : go[fallback[u]][d];
        continue;
      }
      fallback[v] = u == 0 ? 0 : go[fallback[u]][d];
      ends[v] = ends[v] || ends[fallback[v]];
      go[u][d] = v;
      queue.push_back(v);
    }
  }

  // Keep the live states only, numbered in breadth-first order (the start
  // first).
  std::vector<int32_t> number(child.size(), kPruned);
  int live = 0;
  for (int u : order) {
    if (!ends[u]) number[u] = live++;
  }
  MovePruning machine;
  machine.next_.resize(live);
  for (int u : order) {
    if (ends[u]) continue;
    for (int d = 0; d < kNumDirs; ++d) machine.next_[number[u]][d] = number[go[u][d]];
  }
  machine.pruned_sequences_ = static_cast<int>(sequences.size());
  return machine;
}

const MovePruning* MovePruning::For(int rows, int cols, int max_length, const std::function<bool()>& stop) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* machines ABSL_GUARDED_BY(mu) =
      new absl::flat_hash_map<std::tuple<int, int, int>, std::unique_ptr<const MovePruning>>();
  const std::tuple<int, int, int> key(rows, cols, std::clamp(max_length, 2, kMaxLength));
  // Held while building, so that two searches on a new shape build it once.
  absl::MutexLock lock(&mu);
  std::unique_ptr<const MovePruning>& machine = (*machines)[key];
  if (machine == nullptr) {
    std::optional<MovePruning> built = Build(rows, cols, std::get<2>(key), stop);
    if (!built) return nullptr;
    machine = std::make_unique<const MovePruning>(*std::move(built));
  }
  return machine.get();
}

}  // namespace npuzzle
