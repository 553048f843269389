#include "engine/anytime/beam.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#include "engine/anytime/crew.h"
#include "engine/pdb/anonymous_memory.h"

namespace npuzzle {
namespace {

// How many lookups ahead the table's slots are fetched.
constexpr size_t kPrefetchAhead = 16;

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
//
// The slots come zeroed from the kernel, on huge pages where it allows
// (anonymous_memory.h), and a reservation maps its final size at once: a
// wide beam's table is hundreds of megabytes, and zeroing it through 4 KiB
// page faults, once for each doubling on the way, took more than half of a
// beam's time on an AMD EPYC KVM guest, whose page faults are slow (width
// 16,384 on 7x7: 12.6 -> 5.35 s on one thread).
class SeenTable {
 public:
  SeenTable() { Resize(4096); }
  static uint64_t Key(uint64_t hash) { return hash | 1; }
  bool Contains(uint64_t hash) const {
    const uint64_t key = Key(hash);
    for (size_t i = key & mask();; i = (i + 1) & mask()) {
      if (slots_[i] == key) return true;
      if (slots_[i] == 0) return false;
    }
  }
  // A wide beam's table is far larger than the cache: its lookups are
  // asked for some candidates ahead of need.
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[Key(hash) & mask()]); }
  // False if it was there already.
  bool Insert(uint64_t hash) {
    Reserve(1);
    if (!Place(Key(hash))) return false;
    ++size_;
    return true;
  }
  // Inserts `hashes`, which are distinct and none of them here, from
  // the crew's threads at once: a slot is claimed by compare-and-swap, so
  // two threads probing the same run cannot both take one, and with room
  // reserved first nothing moves the slots while they probe.
  void InsertDistinct(const std::vector<uint64_t>& hashes, Crew& crew);
  void Clear() {
    std::fill(slots_, slots_ + capacity_, 0);
    size_ = 0;
  }
  // Room for `more` without growing.
  void Reserve(size_t more) {
    size_t capacity = capacity_;
    while (2 * (size_ + more) > capacity) capacity *= 2;
    if (capacity != capacity_) Resize(capacity);
  }

 private:
  size_t mask() const { return capacity_ - 1; }
  // False if `key` was there already.
  bool Place(uint64_t key) {
    size_t i = key & mask();
    for (; slots_[i] != 0; i = (i + 1) & mask()) {
      if (slots_[i] == key) return false;
    }
    slots_[i] = key;
    return true;
  }
  void Resize(size_t capacity) {
    AnonymousMemory memory(capacity * sizeof(uint64_t));
    if (!memory.ok()) throw std::bad_alloc();
    std::swap(memory_, memory);
    const uint64_t* old = std::exchange(slots_, memory_.as<uint64_t>());
    const size_t old_capacity = std::exchange(capacity_, capacity);
    for (size_t i = 0; i < old_capacity; ++i) {
      if (old[i] != 0) Place(old[i]);
    }
  }

  AnonymousMemory memory_;
  uint64_t* slots_ = nullptr;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

// Below this many items a step stays on the calling thread: waking the
// crew costs microseconds, a narrow beam's whole depth.
constexpr size_t kParallelMin = 256;

// Runs f(slice, begin, end) over [0, n) split into a slice for each of the
// crew's threads.
template <class F>
void ForSlices(Crew& crew, size_t n, F f) {
  if (crew.size() == 1 || n < kParallelMin) {
    f(0, 0, n);
    return;
  }
  const size_t per = (n + crew.size() - 1) / crew.size();
  crew.Run([&](int t) {
    const size_t begin = std::min(n, per * t), end = std::min(n, per * (t + 1));
    if (begin < end) f(t, begin, end);
  });
}

// Runs f(t) for each of `slices` slices holding `items` in all, a thread
// each (there are as many slices as threads, or one).
template <class F>
void ForEachSlice(Crew& crew, int slices, size_t items, F f) {
  if (slices == 1 || items < kParallelMin) {
    for (int t = 0; t < slices; ++t) f(t);
    return;
  }
  crew.Run(f);
}

void SeenTable::InsertDistinct(const std::vector<uint64_t>& hashes, Crew& crew) {
  Reserve(hashes.size());
  ForSlices(crew, hashes.size(), [&](int, size_t begin, size_t end) {
    for (size_t h = begin; h < end; ++h) {
      if (h + kPrefetchAhead < end) Prefetch(hashes[h + kPrefetchAhead]);
      const uint64_t key = Key(hashes[h]);
      for (size_t i = key & mask();; i = (i + 1) & mask()) {
        uint64_t empty = 0;
        if (std::atomic_ref<uint64_t>(slots_[i]).compare_exchange_strong(empty, key, std::memory_order_relaxed)) break;
      }
    }
  });
  size_ += hashes.size();
}

// Picks a depth's layer from its candidates: the best `width` by h, then
// by a seeded hash (the tie), whose states no depth has chosen yet, each
// state once (two parents can share a child), entered in the seen table.
//
// Only the candidates that can be chosen are looked up, in rounds: a round
// brings forward a quarter more than the places left (h takes few values
// in a depth, so a count of each finds the last value taken, and only the
// candidates with that value are ranked, by a partial selection), and
// another round follows only if seen states took more than that. All but
// the walk that takes them in order runs on the slices' threads: counting,
// splitting at the cut, looking up (each lookup a cache miss in a wide
// beam's table) and entering the chosen. What is chosen does not depend on
// the number of threads: the slices are consecutive runs of the parents,
// and each step keeps the order they were generated in.
class LayerChooser {
 public:
  LayerChooser(Crew& crew, uint64_t salt) : crew_(crew), salt_(salt) {}

  // `found` is each slice's candidates, in the order of their parents; it
  // is consumed.
  void Choose(std::vector<std::vector<Candidate>>& found, size_t width, SeenTable& seen,
              std::vector<Candidate>& chosen) {
    chosen.clear();
    this_depth_.Clear();
    for (;;) {
      const size_t left = width - chosen.size();
      const size_t taken = chosen.size();
      Round(found, left + left / 4 + 8);
      Take(seen, width, chosen);
      hashes_.resize(chosen.size() - taken);
      for (size_t i = taken; i < chosen.size(); ++i) hashes_[i - taken] = chosen[i].hash;
      seen.InsertDistinct(hashes_, crew_);
      if (chosen.size() == width) return;
      // The next round ranks what is left, as one slice, in the order the
      // candidates came in.
      left_over_.assign(ranked_.begin() + static_cast<ptrdiff_t>(brought_), ranked_.end());
      for (const auto& part : found) left_over_.insert(left_over_.end(), part.begin(), part.end());
      if (left_over_.empty()) return;
      found.resize(1);
      found[0].swap(left_over_);
    }
  }

 private:
  // Brings the best `count` of `found` (or all of them) to the front of
  // ranked_ (brought_ of them), the ones below the cut value first. Behind
  // them in ranked_ are the rest of the cut value's; those above it stay
  // in `found`.
  void Round(std::vector<std::vector<Candidate>>& found, size_t count) {
    const int slices = static_cast<int>(found.size());
    size_t items = 0;
    for (const auto& part : found) items += part.size();
    per_h_.resize(slices);
    ForEachSlice(crew_, slices, items, [&](int t) {
      per_h_[t].clear();
      for (const Candidate& c : found[t]) {
        if (static_cast<size_t>(c.h) >= per_h_[t].size()) per_h_[t].resize(c.h + 1);
        ++per_h_[t][c.h];
      }
    });
    auto count_of = [this](int t, int h) {
      return static_cast<size_t>(h) < per_h_[t].size() ? per_h_[t][h] : size_t{0};
    };
    size_t longest = 0;
    for (const auto& counts : per_h_) longest = std::max(longest, counts.size());
    int cut = static_cast<int>(longest);  // past every value: all are below it
    size_t below = 0;
    for (int h = 0; h < static_cast<int>(longest); ++h) {
      size_t here = 0;
      for (int t = 0; t < slices; ++t) here += count_of(t, h);
      if (below + here >= count) {
        cut = h;
        break;
      }
      below += here;
    }
    // Each slice writes its candidates below the cut, then those at it, to
    // places of their own: slice by slice, as one thread would have.
    std::vector<size_t> below_at(slices), cut_at(slices);
    size_t next_below = 0, next_cut = below;
    for (int t = 0; t < slices; ++t) {
      below_at[t] = next_below;
      cut_at[t] = next_cut;
      for (int h = 0; h < cut; ++h) next_below += count_of(t, h);
      next_cut += count_of(t, cut);
    }
    ranked_.resize(next_cut);
    ForEachSlice(crew_, slices, items, [&](int t) {
      size_t kept = 0, to_below = below_at[t], to_cut = cut_at[t];
      for (const Candidate& c : found[t]) {
        if (c.h < cut) {
          ranked_[to_below++] = c;
        } else if (c.h == cut) {
          ranked_[to_cut++] = c;
        } else {
          found[t][kept++] = c;
        }
      }
      found[t].resize(kept);
    });
    brought_ = std::min(count, ranked_.size());
    if (ranked_.size() > count) {
      auto tie = [this](const Candidate& c) { return (c.hash ^ salt_) * salt_; };
      std::nth_element(ranked_.begin() + static_cast<ptrdiff_t>(below), ranked_.begin() + static_cast<ptrdiff_t>(count),
                       ranked_.end(), [&tie](const Candidate& a, const Candidate& b) { return tie(a) < tie(b); });
    }
  }

  // Takes ranked_ in order, skipping seen states and states taken already
  // at this depth, until `chosen` holds `width`.
  void Take(const SeenTable& seen, size_t width, std::vector<Candidate>& chosen) {
    unseen_.resize(brought_);
    ForSlices(crew_, brought_, [&](int, size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        if (i + kPrefetchAhead < end) seen.Prefetch(ranked_[i + kPrefetchAhead].hash);
        unseen_[i] = !seen.Contains(ranked_[i].hash);
      }
    });
    for (size_t i = 0; i < brought_ && chosen.size() < width; ++i) {
      if (unseen_[i] && this_depth_.Insert(ranked_[i].hash)) chosen.push_back(ranked_[i]);
    }
  }

  Crew& crew_;
  uint64_t salt_;
  std::vector<std::vector<uint32_t>> per_h_;
  std::vector<Candidate> ranked_, left_over_;
  size_t brought_ = 0;
  std::vector<uint8_t> unseen_;
  std::vector<uint64_t> hashes_;
  SeenTable this_depth_;
};

// Half of cells!, the states a board of `cells` cells can reach from any
// one of them, or SIZE_MAX where that does not fit.
size_t ReachableStates(size_t cells) {
  size_t states = 1;
  for (size_t k = 3; k <= cells; ++k) {
    if (states > SIZE_MAX / k) return SIZE_MAX;
    states *= k;
  }
  return states;
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
  layer[0].hash = ZobristHash(grid, start);
  layer[0].blank = static_cast<uint8_t>(start.blank());
  layer[0].entry = kNumDirs;
  if (layer[0].value.total() == 0) return std::vector<Dir>{};
  // For each depth, each node's parent index and move.
  std::vector<std::vector<std::pair<uint32_t, uint8_t>>> trace;
  SeenTable seen;
  seen.Insert(layer[0].hash);
  // A beam that beats the bound holds about `width` states a depth up to
  // it: room for them from the start saves rehashing the table as it
  // grows, which took a quarter of a wide beam's time. Far below the
  // bound (boards whose first answer is far from the best), the table
  // grows as needed. Nor can it hold more than the board has states
  // (half of cells!): a 3x3 beam as wide as the board reserved 64 MB.
  if (options.bound > 0) {
    seen.Reserve(std::min({width * options.bound, ReachableStates(cells), size_t{1} << 25}));
  }
  const uint64_t salt = options.seed * 0x9e3779b97f4a7c15ULL + 1;
  std::vector<std::vector<Candidate>> found;
  Crew crew(threads);
  LayerChooser chooser(crew, salt);
  // Kept from depth to depth, with the layer being built beside the one
  // being expanded: buffers this size allocated anew each depth came
  // from the kernel each time, and its page faults, taken by both threads
  // at once, were a tenth of a wide beam's time.
  std::vector<Candidate> chosen;
  std::vector<Node> next;
  std::vector<uint8_t> next_cells;
  // A node as the heuristic sees it: its cells and where the blank is (the
  // heuristic reads nothing else, and MoveBlank writes only these).
  auto load = [&](GridState& s, size_t i) {
    std::memcpy(s.at.data(), &layer_cells[i * cells], cells);
    s.pos[0] = layer[i].blank;
  };
  for (int depth = 1;; ++depth) {
    if (options.bound > 0 && depth >= options.bound) return std::nullopt;
    if (options.stop && options.stop()) return std::nullopt;
    found.resize(threads);
    for (auto& part : found) part.clear();
    ForSlices(crew, layer.size(), [&](int slice, size_t begin, size_t end) {
      // Filled here and put back: the slices' vectors sit side by side, and
      // a push onto one of them in place would write a cache line the other
      // thread is writing too.
      std::vector<Candidate> out;
      out.swap(found[slice]);
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
          const uint64_t hash = n.hash ^ ZobristMove(tile, n.blank, to);
          out.push_back({hash, static_cast<uint32_t>(i), h, static_cast<uint8_t>(d)});
        }
      }
      found[slice].swap(out);
    });
    size_t generated = 0;
    for (const auto& part : found) generated += part.size();
    if (options.expanded != nullptr) options.expanded->fetch_add(layer.size(), std::memory_order_relaxed);
    if (options.generated != nullptr) options.generated->fetch_add(generated, std::memory_order_relaxed);
    chooser.Choose(found, width, seen, chosen);
    if (chosen.empty()) return std::nullopt;  // the beam died out: no child, or every one seen
    next.resize(chosen.size());
    next_cells.resize(chosen.size() * cells);
    ForSlices(crew, chosen.size(), [&](int, size_t begin, size_t end) {
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
    trace.emplace_back(chosen.size());
    std::vector<std::pair<uint32_t, uint8_t>>& step = trace.back();
    for (size_t i = 0; i < chosen.size(); ++i) step[i] = {chosen[i].parent, chosen[i].dir};
    layer.swap(next);
    layer_cells.swap(next_cells);
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
