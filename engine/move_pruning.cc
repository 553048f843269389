#include "engine/move_pruning.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "engine/board.h"

namespace npuzzle {
namespace {

constexpr int kRowStep[kNumDirs] = {-1, 1, 0, 0};
constexpr int kColStep[kNumDirs] = {0, 0, -1, 1};
constexpr int kReach = MovePruning::kMaxLength;
static_assert(2 * MovePruning::kMaxLength <= 32, "a sequence's moves are two bits each of a 32-bit code");

// Cells of an unbounded grid, relative to where the blank starts; a
// sequence of at most kMaxLength moves stays inside.
using Cell = uint16_t;
Cell MakeCell(int row, int col) { return static_cast<Cell>((row + kReach) * (2 * kReach + 1) + col + kReach); }
const Cell kOrigin = MakeCell(0, 0);

// The cells the blank has crossed, relative to its start.
struct Footprint {
  int8_t top = 0, bottom = 0, left = 0, right = 0;
  bool Within(const Footprint& o) const {
    return top >= o.top && bottom <= o.bottom && left >= o.left && right <= o.right;
  }
};

// A move sequence, two bits a move with the first highest (so that its
// last k moves are its low 2k bits), and what it does: where the blank
// is, and for each cell whose content changed, the cell its content
// started on (kOrigin for the blank), sorted by cell. Fixed-size, as the
// build makes one for each of millions of sequences.
struct Sequence {
  uint32_t code = 0;
  int length = 0;
  int row = 0, col = 0;
  Footprint footprint;
  int changed = 0;
  std::array<std::pair<Cell, Cell>, MovePruning::kMaxLength + 1> moved;
  // Of the moved pairs, kept as each changes (Zobrist's sum of a random
  // number per pair): hashing the pairs whole took a tenth of the build.
  uint64_t moved_hash = 0;

  static Sequence Of(uint32_t code, int length) {
    Sequence s;
    for (int i = length - 1; i >= 0; --i) s = s.Then(static_cast<int>(code >> (2 * i) & 3));
    return s;
  }
  static uint64_t PairHash(Cell cell, Cell content) {
    uint64_t x = (uint64_t{cell} << 16 | content) * 0x9E3779B97F4A7C15ull;  // splitmix64's finish
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  Cell ContentOf(Cell cell) const {
    const auto* end = moved.begin() + changed;
    const auto* it = std::lower_bound(moved.begin(), end, std::make_pair(cell, Cell{0}));
    return it != end && it->first == cell ? it->second : cell;
  }
  void SetContent(Cell cell, Cell content) {
    auto* end = moved.begin() + changed;
    auto* it = std::lower_bound(moved.begin(), end, std::make_pair(cell, Cell{0}));
    const bool present = it != end && it->first == cell;
    if (present) moved_hash -= PairHash(cell, it->second);
    if (content != cell) moved_hash += PairHash(cell, content);
    if (content == cell) {
      if (present) {
        std::copy(it + 1, end, it);
        --changed;
      }
    } else if (present) {
      it->second = content;
    } else {
      std::copy_backward(it, end, end + 1);
      *it = {cell, content};
      ++changed;
    }
  }
  Sequence Then(int d) const {
    Sequence next = *this;
    next.code = code << 2 | static_cast<uint32_t>(d);
    ++next.length;
    const Cell from = MakeCell(row, col);
    next.row += kRowStep[d];
    next.col += kColStep[d];
    const Cell to = MakeCell(next.row, next.col);
    const Cell tile = ContentOf(to);
    next.SetContent(from, tile);
    next.SetContent(to, kOrigin);
    Footprint& f = next.footprint;
    f.top = static_cast<int8_t>(std::min(int{f.top}, next.row));
    f.bottom = static_cast<int8_t>(std::max(int{f.bottom}, next.row));
    f.left = static_cast<int8_t>(std::min(int{f.left}, next.col));
    f.right = static_cast<int8_t>(std::max(int{f.right}, next.col));
    return next;
  }
  // Equivalent sequences have the same effect: the blank's place and every
  // moved tile.
  bool SameEffect(const Sequence& o) const {
    return row == o.row && col == o.col && changed == o.changed &&
           std::equal(moved.begin(), moved.begin() + changed, o.moved.begin());
  }
  uint64_t EffectHash() const { return moved_hash + PairHash(MakeCell(row, col), kOrigin); }
  std::string Moves() const {
    std::string moves;
    for (int i = length - 1; i >= 0; --i) moves.push_back(static_cast<char>(code >> (2 * i) & 3));
    return moves;
  }
};

// Sequences kept so far (none of their equivalents is shorter, or as long
// and earlier, within their footprint), findable by effect. Each is stored
// as its moves and footprint, 12 bytes, and rebuilt to compare effects,
// which only sequences whose effects hash alike need: millions are kept
// at 14 moves, where whole Sequences (and the strings the build used
// before) took a gigabyte.
class KeptSequences {
 public:
  // Keeps `s` unless a kept sequence does what it does within its
  // footprint; false then. One probe of the table for both.
  bool AddUnlessEquivalentWithin(const Sequence& s) {
    const auto it = first_.try_emplace(s.EffectHash(), kEnd).first;
    for (uint32_t i = it->second; i != kEnd; i = kept_[i].next) {
      const Kept& k = kept_[i];
      if (k.footprint.Within(s.footprint) && Sequence::Of(k.code, k.length).SameEffect(s)) return false;
    }
    kept_.push_back({s.code, it->second, s.footprint, static_cast<uint8_t>(s.length)});
    it->second = static_cast<uint32_t>(kept_.size() - 1);
    return true;
  }
  void Prefetch(const Sequence& s) const { first_.prefetch(s.EffectHash()); }
  uint64_t Bytes() const {
    return kept_.capacity() * sizeof(Kept) + first_.capacity() * (sizeof(std::pair<uint64_t, uint32_t>) + 1);
  }
  // What holding `count` sequences may take: the vector doubled, the
  // table at its lowest load.
  static uint64_t BytesFor(uint64_t count) {
    return count * (2 * sizeof(Kept) + 2 * (sizeof(std::pair<uint64_t, uint32_t>) + 1));
  }
  uint64_t size() const { return kept_.size(); }

 private:
  static constexpr uint32_t kEnd = UINT32_MAX;
  struct Kept {
    uint32_t code;
    uint32_t next;  // the next kept sequence whose effect hashes alike
    Footprint footprint;
    uint8_t length;
  };
  std::vector<Kept> kept_;
  absl::flat_hash_map<uint64_t, uint32_t> first_;  // effect hash -> latest kept sequence with it
};

// A machine's transitions while it is built: by state and move, the next
// state or -1 where the moves so far end with a pruned sequence.
using Transitions = std::vector<std::array<int32_t, kNumDirs>>;

// An Aho-Corasick automaton over the pruned sequences: its state is the
// longest suffix of the moves so far that begins some pruned sequence, and
// a state whose suffixes include a whole one is where pruning happens.
// The live states are numbered in breadth-first order, the start first.
Transitions Automaton(absl::Span<const std::string> sequences) {
  Transitions child(1);
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
  Transitions go(child.size());
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

  std::vector<int32_t> number(child.size(), -1);
  int live = 0;
  for (int u : order) {
    if (!ends[u]) number[u] = live++;
  }
  Transitions next(live);
  for (int u : order) {
    if (ends[u]) continue;
    for (int d = 0; d < kNumDirs; ++d) next[number[u]][d] = number[go[u][d]];
  }
  return next;
}

// The minimal sequences to reject, found breadth-first in U < D < L < R
// order, so that every sequence met before another of the same length is
// earlier in that order; all of them up to `length` moves, which is
// max_length unless the next length would take more than max_bytes.
struct Pruned {
  std::vector<std::string> sequences;
  int length = 0;
};
std::optional<Pruned> PrunedSequences(int rows, int cols, int max_length, const std::function<bool()>& stop,
                                      uint64_t max_bytes) {
  constexpr uint64_t kSequencesPerCheck = 4096;
  uint64_t made = 0;
  Pruned pruned;
  KeptSequences kept;
  kept.AddUnlessEquivalentWithin(Sequence());
  // The codes of the kept sequences one move shorter, ascending: each is
  // its predecessor's children in move order, so neighbours share most of
  // their moves, and `path` rebuilds only the moves after the shared part.
  std::vector<uint32_t> level = {0};
  struct Step {
    Sequence sequence;
    int state;  // in `contains`
  };
  std::vector<Step> path(max_length + 1);
  for (int length = 1; length <= max_length && !level.empty(); ++length) {
    // A parent has at most three children, as the fourth move undoes its
    // last. A level that could not fit is not started.
    const uint64_t children = 3 * level.size();
    if (KeptSequences::BytesFor(kept.size() + children) + children * sizeof(uint32_t) > max_bytes) {
      return pruned;
    }
    // Whether a sequence contains one already pruned, all of which are
    // shorter than this level's.
    const Transitions contains = Automaton(pruned.sequences);
    path[0] = {Sequence(), 0};
    int built = 0;  // path[0..built] hold the moves of the last parent
    uint32_t previous = 0;
    const size_t pruned_before = pruned.sequences.size();
    std::vector<uint32_t> next_level;
    for (const uint32_t code : level) {
      const int depth = length - 1;
      // Moves from the first that differ from the last parent's.
      const int shared = std::min(built, depth - static_cast<int>(std::bit_width(code ^ previous) + 1) / 2);
      for (int k = shared; k < depth; ++k) {
        const int d = static_cast<int>(code >> (2 * (depth - 1 - k)) & 3);
        path[k + 1] = {path[k].sequence.Then(d), contains[path[k].state][d]};
      }
      built = depth;
      previous = code;
      const Step& parent = path[depth];
      // The children are made, and their places in the table fetched, all
      // before any is looked up: the lookups missed the cache, one at a
      // time, for a third of the build.
      std::array<Sequence, kNumDirs> children;
      size_t count = 0;
      for (int d = 0; d < kNumDirs; ++d) {
        if (++made % kSequencesPerCheck == 0) {
          if (stop && stop()) return std::nullopt;
          if (kept.Bytes() + (level.capacity() + next_level.capacity()) * sizeof(uint32_t) > max_bytes) {
            // The machine of the lengths done.
            pruned.sequences.resize(pruned_before);
            return pruned;
          }
        }
        if (contains[parent.state][d] < 0) continue;  // a pruned sequence ends here
        Sequence& s = children[count] = parent.sequence.Then(d);
        const Footprint& f = s.footprint;
        if (f.bottom - f.top >= rows || f.right - f.left >= cols) continue;  // never legal here
        kept.Prefetch(s);
        ++count;
      }
      for (const Sequence& s : absl::MakeConstSpan(children.data(), count)) {
        if (!kept.AddUnlessEquivalentWithin(s)) {
          pruned.sequences.push_back(s.Moves());
          continue;
        }
        if (length < max_length) next_level.push_back(s.code);
      }
    }
    level = std::move(next_level);
    pruned.length = length;
  }
  pruned.length = max_length;  // done, or no longer sequence fits the board
  return pruned;
}

// The smallest machine that prunes the same move sequences (Moore's
// partition refinement: states stay together while every move takes them
// to states that are together), numbered in breadth-first order from the
// start. Many automaton states differ only in sequences that no longer
// matter; merging them takes a sixth off at 14 moves on 5x5, and a smaller
// machine stays in a faster cache.
std::optional<Transitions> Minimize(const Transitions& next, const std::function<bool()>& stop) {
  const int n = static_cast<int>(next.size());
  const int dead = n;  // where pruned moves go, a state of its own here
  std::vector<int32_t> group(n + 1, 0);
  group[dead] = 1;
  for (size_t groups = 2;;) {
    if (stop && stop()) return std::nullopt;  // a round takes milliseconds at 14 moves
    absl::flat_hash_map<std::array<int32_t, kNumDirs + 1>, int32_t> by_signature;
    std::vector<int32_t> refined(n + 1);
    for (int s = 0; s <= n; ++s) {
      std::array<int32_t, kNumDirs + 1> signature;
      signature[0] = group[s];
      for (int d = 0; d < kNumDirs; ++d) {
        const int t = s == dead || next[s][d] < 0 ? dead : next[s][d];
        signature[d + 1] = group[t];
      }
      refined[s] = by_signature.try_emplace(signature, static_cast<int32_t>(by_signature.size())).first->second;
    }
    group = std::move(refined);
    if (by_signature.size() == groups) break;
    groups = by_signature.size();
  }
  // Numbered from the start's group breadth-first; the dead group is -1.
  std::vector<int32_t> number(n + 1, -2);
  number[group[dead]] = -1;
  std::vector<int32_t> representative = {0};  // a state of each new number's group
  number[group[0]] = 0;
  for (size_t i = 0; i < representative.size(); ++i) {
    for (int d = 0; d < kNumDirs; ++d) {
      const int t = next[representative[i]][d];
      if (t < 0 || number[group[t]] != -2) continue;
      number[group[t]] = static_cast<int32_t>(representative.size());
      representative.push_back(t);
    }
  }
  Transitions minimal(representative.size());
  for (size_t i = 0; i < representative.size(); ++i) {
    for (int d = 0; d < kNumDirs; ++d) {
      const int t = next[representative[i]][d];
      minimal[i][d] = t < 0 ? -1 : number[group[t]];
    }
  }
  return minimal;
}

}  // namespace

std::optional<MovePruning> MovePruning::Build(int rows, int cols, int max_length, const std::function<bool()>& stop,
                                              uint64_t max_bytes) {
  const std::optional<Pruned> pruned = PrunedSequences(rows, cols, max_length, stop, max_bytes);
  if (!pruned) return std::nullopt;
  // Found shortest first, so dropping the longest sequences from the end
  // leaves the machine of a shorter length, which is where a machine too
  // large for 16-bit states goes.
  const std::vector<std::string>& sequences = pruned->sequences;
  size_t count = sequences.size();
  int length = pruned->length;
  for (;;) {
    const std::optional<Transitions> minimal = Minimize(Automaton(absl::MakeConstSpan(sequences.data(), count)), stop);
    if (!minimal) return std::nullopt;
    const Transitions& next = *minimal;
    if (next.size() < kPruned) {
      MovePruning machine;
      machine.next_.resize(next.size());
      for (size_t s = 0; s < next.size(); ++s) {
        for (int d = 0; d < kNumDirs; ++d) {
          machine.next_[s][d] = static_cast<uint16_t>(next[s][d] < 0 ? kPruned : next[s][d]);
        }
      }
      machine.pruned_sequences_ = static_cast<int>(count);
      machine.length_ = length;
      return machine;
    }
    length = static_cast<int>(sequences[count - 1].size()) - 1;
    while (count > 0 && static_cast<int>(sequences[count - 1].size()) > length) --count;
  }
}

const MovePruning* MovePruning::For(int rows, int cols, int max_length, const std::function<bool()>& stop) {
  // One lock a machine, held while it builds, so that two searches on a new
  // shape build it once, and a long build holds up no other shape's.
  struct Slot {
    absl::Mutex mu;
    std::unique_ptr<const MovePruning> machine ABSL_GUARDED_BY(mu);
  };
  static absl::Mutex mu(absl::kConstInit);
  static auto* slots ABSL_GUARDED_BY(mu) = new absl::flat_hash_map<std::tuple<int, int, int>, std::unique_ptr<Slot>>();
  const std::tuple<int, int, int> key(rows, cols, std::clamp(max_length, 2, kMaxLength));
  Slot* slot;
  {
    absl::MutexLock lock(&mu);
    std::unique_ptr<Slot>& entry = (*slots)[key];
    if (entry == nullptr) entry = std::make_unique<Slot>();
    slot = entry.get();
  }
  absl::MutexLock lock(&slot->mu);
  if (slot->machine == nullptr) {
    std::optional<MovePruning> built = Build(rows, cols, std::get<2>(key), stop);
    if (!built) return nullptr;
    slot->machine = std::make_unique<const MovePruning>(*std::move(built));
  }
  return slot->machine.get();
}

MachineBuild::MachineBuild(int rows, int cols, int length)
    : thread_([this, rows, cols, length] {
        machine_.store(MovePruning::For(rows, cols, length, [this] { return abandoned_.load(); }));
      }) {}

MachineBuild::~MachineBuild() {
  abandoned_.store(true);
  thread_.join();
}

}  // namespace npuzzle
