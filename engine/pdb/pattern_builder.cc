#include "engine/pdb/pattern_builder.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <span>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/pdb/anonymous_memory.h"
#include "engine/pdb/blank_extras.h"
#include "engine/pdb/packed_distances.h"
#include "engine/pdb/placement.h"

namespace npuzzle {
namespace {

// The abstract space: a placement of the pattern's tiles plus the connected
// region of free cells the blank is in. Moving the blank inside its region
// moves only other tiles, which costs nothing, so every remaining edge
// (a pattern tile sliding into the region) costs one and plain
// breadth-first search by layers gives exact distances. A state is stored
// as placement rank x (number of free cells) + the index, among the free
// cells, of its region's lowest cell; each takes two bits:
constexpr uint64_t kUnseen = 0;
constexpr uint64_t kClosed = 3;
// and 1 or 2 for "in the layer being expanded" / "in the next layer",
// swapping roles each layer so no pass is needed to promote one to the
// other.
constexpr uint64_t kStatesPerWord = 32;
constexpr uint64_t kFieldLowBits = 0x5555555555555555ull;
constexpr uint64_t kWordsPerChunk = uint64_t{1} << 14;
// Ranks a scan steps forward by carrying digits rather than unranking.
constexpr uint64_t kMaxAdvance = 64;

class Geometry {
 public:
  Geometry(int rows, int cols) : cols_(cols) {
    const int cells = rows * cols;
    board_ = cells == 64 ? ~CellMask{0} : CellBit(cells) - 1;
    for (int c = 0; c < cells; ++c) {
      if (c % cols != 0) not_left_ |= CellBit(c);
      if (c % cols != cols - 1) not_right_ |= CellBit(c);
      const int r = c / cols, k = c % cols;
      if (r > 0) neighbors_[c] |= CellBit(c - cols);
      if (r + 1 < rows) neighbors_[c] |= CellBit(c + cols);
      if (k > 0) neighbors_[c] |= CellBit(c - 1);
      if (k + 1 < cols) neighbors_[c] |= CellBit(c + 1);
      // The eight cells around c, clockwise from the one above.
      constexpr int kRing[8][2] = {{-1, 0}, {-1, 1}, {0, 1}, {1, 1}, {1, 0}, {1, -1}, {0, -1}, {-1, -1}};
      for (int i = 0; i < 8; ++i) {
        const int rr = r + kRing[i][0], kk = k + kRing[i][1];
        if (rr >= 0 && rr < rows && kk >= 0 && kk < cols) ring_[c][i] = CellBit(rr * cols + kk);
      }
    }
    for (int around = 0; around < 256; ++around) may_cut_[around] = MayCutAround(around);
    // Small boards answer every region question from tables: flood fills
    // were a third of the work of building the 15-puzzle's tables.
    if (cells <= kTabulatedCells) {
      slots_.resize(size_t{1} << cells);
      for (CellMask free = 0; free <= board_; ++free) {
        for (int c = 0; c < cells; ++c) {
          if (((free >> c) & 1) == 0) continue;
          slots_[free] |= static_cast<uint64_t>(SlotOf(Flood(CellBit(c), free), free)) << (4 * c);
        }
      }
    }
  }

  CellMask board() const { return board_; }
  CellMask Neighbors(int cell) const { return neighbors_[cell]; }

  // The region of `free` whose lowest cell is the slot-th free cell.
  CellMask RegionAt(int slot, CellMask free) const {
    if (slots_.empty()) return Flood(CellBit(PlacementIndexer::SelectBit(free, slot)), free);
    // The cells of one region share their slot: pick out the nibbles equal
    // to `slot` and gather a bit from each, rather than keep a table of
    // regions four times the size.
    uint64_t differs = slots_[free] ^ (slot * kNibbleLowBits);
    differs |= differs >> 2;
    differs |= differs >> 1;
    uint64_t same = ~differs & kNibbleLowBits;
    same = (same | same >> 3) & 0x0303030303030303ull;
    same = (same | same >> 6) & 0x000f000f000f000full;
    same = (same | same >> 12) & 0x000000ff000000ffull;
    same = (same | same >> 24) & 0xffffull;
    return same & free;
  }

  // Where a state's blank region is kept: the index, among the free cells,
  // of the lowest cell of the region holding `cell`.
  int Slot(int cell, CellMask free) const {
    return slots_.empty() ? SlotOf(Flood(CellBit(cell), free), free) : (slots_[free] >> (4 * cell)) & 15;
  }

  // Slot(from, free) for the state a move leads to: a tile left `from` for
  // `to`, a cell of the blank's region `region`, and `free` are the free
  // cells after it. The blank's new region is `region` less `to` plus
  // `from`, unless `to` held it together or `from` joins it to another
  // region, and a look at the cells around them mostly settles that
  // without a flood fill (which took a third of a 24-puzzle table's build).
  int SlotAfterMove(int from, int to, CellMask free, CellMask region) const {
    const CellMask joined = region | CellBit(from);
    if (slots_.empty() && (neighbors_[from] & free & ~joined) == 0 && !MayCut(to, joined)) {
      return SlotOf(joined & ~CellBit(to), free);
    }
    return Slot(from, free);
  }

 private:
  static constexpr int kTabulatedCells = 16;
  static constexpr uint64_t kNibbleLowBits = 0x1111111111111111ull;

  // Whether taking `cell` out of `cells` (which hold it) may split them:
  // true unless its neighbours in `cells` are linked through the cells
  // around it. A false alarm costs only a flood fill.
  bool MayCut(int cell, CellMask cells) const {
    int around = 0;
    for (int i = 0; i < 8; ++i) around |= ((cells & ring_[cell][i]) != 0) << i;
    return may_cut_[around];
  }

  // `around` has bit i set when the i-th cell around a cell (clockwise
  // from the one above) is present; cells next to each other on that ring
  // are neighbours on the board, and the even ones are the cell's own
  // neighbours. True when the present neighbours lie in more than one run
  // of present ring cells.
  static bool MayCutAround(int around) {
    if (around == 255) return false;
    int start = 0;
    while ((around >> start) & 1) ++start;  // an absent cell: runs begin after it
    int runs_with_neighbors = 0;
    bool in_run = false, run_has_neighbor = false;
    for (int step = 1; step <= 8; ++step) {
      const int i = (start + step) % 8;
      if ((around >> i) & 1) {
        in_run = true;
        run_has_neighbor |= i % 2 == 0;
      } else if (in_run) {
        runs_with_neighbors += run_has_neighbor;
        in_run = run_has_neighbor = false;
      }
    }
    return runs_with_neighbors > 1;
  }

  static int SlotOf(CellMask region, CellMask free) {
    return std::popcount(free & CellsBelow(std::countr_zero(region)));
  }

  CellMask Flood(CellMask seed, CellMask free) const {
    CellMask region = seed, before;
    do {
      before = region;
      region |= ((region << 1) & not_left_) | ((region >> 1) & not_right_) | (region << cols_) | (region >> cols_);
      region &= free;
    } while (region != before);
    return region;
  }

  int cols_;
  CellMask board_ = 0, not_left_ = 0, not_right_ = 0;
  CellMask neighbors_[64] = {};
  CellMask ring_[64][8] = {};  // the cells around each cell, clockwise from above; 0 off the board
  bool may_cut_[256];
  std::vector<uint64_t> slots_;  // [free set], 4 bits a cell, boards of up to 16 cells
};

class Builder {
 public:
  Builder(const Board& goal, const std::vector<int>& group, const PatternBuildOptions& options)
      : geometry_(goal.rows(), goal.cols()),
        indexer_(goal.cells(), static_cast<int>(group.size())),
        free_cells_(goal.cells() - static_cast<int>(group.size())),
        states_(indexer_.size() * free_cells_),
        words_((states_ + kStatesPerWord - 1) / kStatesPerWord),
        codes_memory_(words_ * 8),
        extras_memory_(options.blank_aware ? BlankExtrasBytes(indexer_.size(), goal.cells(), indexer_.tiles()) : 0),
        distance_(indexer_.size(), std::clamp(options.distance_bits, 1, 8)),
        codes_(codes_memory_.as<uint64_t>()),
        extras_(options.blank_aware ? extras_memory_.as<uint64_t>() : nullptr),
        options_(options) {
    uint8_t home[64];
    for (size_t i = 0; i < group.size(); ++i) {
      home[i] =
          static_cast<uint8_t>(std::find(goal.tiles().begin(), goal.tiles().end(), group[i]) - goal.tiles().begin());
    }
    if (Allocated()) Mark(StateOf(indexer_.Rank(home), home, CellBit(goal.blank())), /*code=*/1);
  }

  absl::StatusOr<AnonymousMemory> Run() {
    if (!Allocated()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", (codes_memory_.bytes() + distance_.bytes() + ExtrasBytes()) >> 20,
                       " MiB to build a pattern table"));
    }
    for (int depth = 0;; ++depth) {
      if (static_cast<uint64_t>(depth) + 1 > distance_.max_value()) {
        if (absl::Status widened = Widen(); !widened.ok()) return widened;
      }
      const uint64_t current = depth % 2 == 0 ? 1 : 2;
      next_chunk_ = 0;
      layer_expanded_ = 0;
      layer_discovered_ = 0;
      std::vector<std::thread> threads;
      for (int t = 1; t < options_.threads; ++t) threads.emplace_back([&] { Work(depth, current); });
      Work(depth, current);
      for (std::thread& t : threads) t.join();
      if (stop_.load() != kRunning) break;
      expanded_ += layer_expanded_;
      Report(depth, 1.0);
      if (layer_discovered_ == 0) break;
    }
    switch (stop_.load()) {
      case kCancelled:
        return absl::CancelledError("the pattern table build was cancelled");
      case kDeadline:
        return absl::DeadlineExceededError("the time limit ran out while building a pattern table");
      default:
        return FinishDistances();
    }
  }

 private:
  bool Allocated() const { return codes_memory_.ok() && distance_.ok() && (extras_ == nullptr || extras_memory_.ok()); }
  // The extras' memory, none when not blank-aware (an empty mapping still
  // takes a byte).
  uint64_t ExtrasBytes() const { return extras_ != nullptr ? extras_memory_.bytes() : 0; }

  // The state of a placement (`cells`, the group's tiles in order) with the
  // blank somewhere in `blank_side`.
  uint64_t StateOf(uint64_t rank, const uint8_t* cells, CellMask blank_side) const {
    CellMask placed = 0;
    for (int i = 0; i < indexer_.tiles(); ++i) placed |= CellBit(cells[i]);
    const CellMask free = geometry_.board() & ~placed;
    return rank * free_cells_ + geometry_.Slot(std::countr_zero(blank_side), free);
  }

  // Distances outgrew their width: a byte an entry from here on.
  absl::Status Widen() {
    const uint64_t bytes =
        codes_memory_.bytes() + distance_.bytes() + PackedDistances::Bytes(indexer_.size(), 8) + ExtrasBytes();
    if (options_.max_memory_bytes != 0 && bytes > options_.max_memory_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("pattern distances outgrew ", distance_.bits(), " bits; widening them to a byte needs ",
                       bytes >> 20, " MiB, more than the memory limit of ", options_.max_memory_bytes >> 20, " MiB"));
    }
    return RepackToBytes();
  }

  absl::Status RepackToBytes() {
    PackedDistances wide(indexer_.size(), 8);
    if (!wide.ok()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", wide.bytes() >> 20, " MiB for a pattern table's entries"));
    }
    const uint64_t words = wide.words();
    ForSlices(words, [&](uint64_t begin, uint64_t end) { wide.CopyWords(distance_, begin, end); });
    distance_ = std::move(wide);
    return absl::OkStatus();
  }

  // Runs f(begin, end) over slices of [0, n) on the build's threads.
  template <class F>
  void ForSlices(uint64_t n, F f) {
    std::vector<std::thread> threads;
    const uint64_t slice = (n + options_.threads - 1) / options_.threads;
    for (int t = 0; t < options_.threads; ++t) {
      threads.emplace_back([&f, n, slice, t] { f(std::min(n, t * slice), std::min(n, (t + 1) * slice)); });
    }
    for (std::thread& t : threads) t.join();
  }

  // Entries hold distance + 1 while building (0: not reached yet, which is
  // what fresh memory holds); every placement is reached, so one pass
  // takes each down to its distance. The scratch space goes first, so that
  // the bytes of the result take its place. A byte an entry rounds up to a
  // whole word, which is where the extras go.
  absl::StatusOr<AnonymousMemory> FinishDistances() {
    codes_memory_ = AnonymousMemory();
    if (distance_.bits() != 8) {
      if (absl::Status repacked = RepackToBytes(); !repacked.ok()) return repacked;
    }
    AnonymousMemory bytes = std::move(distance_).TakeBytes();
    uint8_t* d = bytes.as<uint8_t>();
    ForSlices(indexer_.size(), [d](uint64_t begin, uint64_t end) {
      for (uint64_t i = begin; i < end; ++i) --d[i];
    });
    if (extras_ == nullptr) return bytes;
    const uint64_t offset = BlankExtrasOffset(indexer_.size());
    AnonymousMemory both(offset + extras_memory_.bytes());
    if (!both.ok()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", both.bytes() >> 20, " MiB for a zero-aware pattern table"));
    }
    std::memcpy(both.as<uint8_t>(), d, indexer_.size());
    std::memcpy(both.as<uint8_t>() + offset, extras_, extras_memory_.bytes());
    return both;
  }

  // Sets an unseen state's code; false if it already had one.
  bool Mark(uint64_t state, uint64_t code) {
    std::atomic_ref<uint64_t> word(codes_[state / kStatesPerWord]);
    const int shift = static_cast<int>(state % kStatesPerWord) * 2;
    uint64_t old = word.load(std::memory_order_relaxed);
    while (((old >> shift) & 3) == kUnseen) {
      if (word.compare_exchange_weak(old, old | (code << shift), std::memory_order_relaxed)) return true;
    }
    return false;
  }

  // Whether to go on with the next chunk: false once cancelled or past the
  // deadline. Also reports progress when it is due.
  bool Continue(int depth, uint64_t begin) {
    if (stop_.load(std::memory_order_relaxed) != kRunning) return false;
    const absl::Time now = absl::Now();
    int reason = kRunning;
    if (options_.cancel != nullptr && options_.cancel->cancelled()) {
      reason = kCancelled;
    } else if (now >= options_.deadline) {
      reason = kDeadline;
    }
    if (reason != kRunning) {
      int running = kRunning;
      stop_.compare_exchange_strong(running, reason);
      return false;
    }
    int64_t due = next_report_ns_.load(std::memory_order_relaxed);
    const int64_t now_ns = absl::ToUnixNanos(now);
    if (now_ns >= due &&
        next_report_ns_.compare_exchange_strong(due, now_ns + absl::ToInt64Nanoseconds(options_.progress_interval))) {
      Report(depth, static_cast<double>(begin) / words_);
    }
    return true;
  }

  void Report(int depth, double layer_done) {
    if (options_.on_progress) {
      options_.on_progress({depth, layer_done, expanded_, states_, absl::Now() - start_});
    }
  }

  void Work(int depth, uint64_t current) {
    const uint64_t next = 3 - current;
    const uint64_t words = words_;
    uint64_t expanded = 0, discovered = 0;
    Pending pending[2];
    int turn = 0;
    // The placement of the last state expanded, advanced from one to the
    // next rather than unranked for each.
    uint64_t at_rank = 0;
    uint8_t cells[64], digit[64];
    indexer_.Unrank(0, cells, digit);
    for (;;) {
      const uint64_t begin = next_chunk_.fetch_add(kWordsPerChunk);
      if (begin >= words || !Continue(depth, begin)) break;
      const uint64_t end = std::min(words, begin + kWordsPerChunk);
      for (uint64_t w = begin; w < end; ++w) {
        std::atomic_ref<uint64_t> word(codes_[w]);
        const uint64_t x = word.load(std::memory_order_relaxed) ^ (current * kFieldLowBits);
        uint64_t in_layer = ~(x | (x >> 1)) & kFieldLowBits;  // fields equal to `current`
        if (in_layer == 0) continue;
        const uint64_t close = in_layer * kClosed;
        // Walk the word's states in order, stepping (rank, slot) without
        // dividing for each one.
        const uint64_t first = w * kStatesPerWord;
        uint64_t rank = first / free_cells_;
        int slot = static_cast<int>(first % free_cells_);
        int at = 0;
        while (in_layer != 0) {
          const int field = std::countr_zero(in_layer) / 2;
          in_layer &= in_layer - 1;
          for (slot += field - at, at = field; slot >= free_cells_; slot -= free_cells_) ++rank;
          if (rank - at_rank <= kMaxAdvance) {
            indexer_.Advance(rank - at_rank, cells, digit);
          } else {
            indexer_.Unrank(rank, cells, digit);
          }
          at_rank = rank;
          discovered += Expand(rank, cells, digit, slot, depth, next, pending[turn], pending[turn ^ 1]);
          turn ^= 1;
          ++expanded;
        }
        word.fetch_or(close, std::memory_order_relaxed);
      }
    }
    discovered += pending[turn ^ 1].MarkAll(*this, next);
    layer_expanded_ += expanded;
    layer_discovered_ += discovered;
  }

  // Successors waiting to be marked. Marking touches words far apart in a
  // table of up to a gigabyte, so each expansion prefetches its successors'
  // words and marks the previous expansion's, whose cache lines have had a
  // whole expansion's time to arrive.
  struct Pending {
    uint64_t states[4 * 64];
    int count = 0;

    uint64_t MarkAll(Builder& builder, uint64_t code) {
      uint64_t marked = 0;
      for (int i = 0; i < count; ++i) marked += builder.Mark(states[i], code);
      count = 0;
      return marked;
    }
  };

  // Records the placement's distance, queues the state's successors in
  // `fresh` and marks the ones `earlier` holds; returns how many it marked.
  // `cells` and `digit` are the placement of `rank`, as Unrank gives them.
  uint64_t Expand(uint64_t rank, const uint8_t* cells, const uint8_t* digit, int slot, int depth, uint64_t next,
                  Pending& fresh, Pending& earlier) {
    const int tiles = indexer_.tiles();
    CellMask placed = 0;
    for (int i = 0; i < tiles; ++i) placed |= CellBit(cells[i]);
    const CellMask free = geometry_.board() & ~placed;
    const CellMask region = geometry_.RegionAt(slot, free);

    // Layers are expanded in order, so the first layer to reach a placement
    // (through any blank region) holds its distance. Several threads may
    // write the same value.
    distance_.SetIfUnset(rank, depth + 1);
    if (extras_ != nullptr) RecordExtra(rank, depth, placed, region);

    // A successor moves tile i from `from` to `to`. Digits before i keep
    // their value and digit i is recomputed. A later tile's digit counts
    // tile i while it is below that tile's cell, so it changes only if its
    // cell lies between `from` and `to`: never on a move sideways, and on a
    // move down (up) it grows (shrinks) by one. So the successor's rank is
    // a small correction to this one's. Tiles go last to first, so that the
    // later tiles are known.
    fresh.count = 0;
    CellMask later_cells = 0;
    uint64_t weight_at[64];  // a later tile's place value, by its cell
    for (int i = tiles - 1; i >= 0; --i) {
      const int from = cells[i];
      const CellMask earlier_cells = placed & ~later_cells & ~CellBit(from);
      const uint64_t base = rank - digit[i] * indexer_.weight(i);
      for (CellMask targets = geometry_.Neighbors(from) & region; targets != 0; targets &= targets - 1) {
        const int to = std::countr_zero(targets);
        uint64_t between = 0;
        const int low = std::min(from, to), high = std::max(from, to);
        for (CellMask b = later_cells & CellsBelow(high) & ~CellsBelow(low + 1); b != 0; b &= b - 1) {
          between += weight_at[std::countr_zero(b)];
        }
        const uint64_t child_rank = base + (to - std::popcount(earlier_cells & CellsBelow(to))) * indexer_.weight(i) +
                                    (to > from ? between : -between);
        // The tile left `from`: that is where the blank stands now.
        const CellMask child_free = (free | CellBit(from)) & ~CellBit(to);
        const uint64_t child = child_rank * free_cells_ + geometry_.SlotAfterMove(from, to, child_free, region);
        __builtin_prefetch(&codes_[child / kStatesPerWord], 1);
        fresh.states[fresh.count++] = child;
      }
      later_cells |= CellBit(from);
      weight_at[from] = indexer_.weight(i);
    }
    return earlier.MarkAll(*this, next);
  }

  // The placement's extra moves with the blank anywhere in `region`, past
  // its distance (set by now, from this layer or an earlier one), halved
  // (they are even; engine/pdb/blank_extras.h). Fresh memory holds 0,
  // which most entries keep, so only the rest are written; a placement's
  // fields may share a word with another thread's placements.
  void RecordExtra(uint64_t rank, int depth, CellMask placed, CellMask region) {
    const uint64_t extra = std::min<uint64_t>(kMaxBlankExtraField, (depth + 1 - distance_.Get(rank)) / 2);
    if (extra == 0) return;
    for (; region != 0; region &= region - 1) {
      const uint64_t field = BlankExtraField(rank, free_cells_, FreeRank(placed, std::countr_zero(region)));
      std::atomic_ref<uint64_t>(extras_[field / kBlankExtrasPerWord])
          .fetch_or(extra << (field % kBlankExtrasPerWord * 2), std::memory_order_relaxed);
    }
  }

  const Geometry geometry_;
  const PlacementIndexer indexer_;
  const int free_cells_;
  const uint64_t states_;
  const uint64_t words_;
  AnonymousMemory codes_memory_;   // two bits a state
  AnonymousMemory extras_memory_;  // two bits a placement's free cell, if blank-aware
  PackedDistances distance_;       // an entry a placement
  uint64_t* const codes_;
  uint64_t* const extras_;
  const PatternBuildOptions& options_;
  static constexpr int kRunning = 0, kCancelled = 1, kDeadline = 2;
  const absl::Time start_ = absl::Now();
  std::atomic<int> stop_{kRunning};
  std::atomic<int64_t> next_report_ns_{0};
  uint64_t expanded_ = 0;  // before the current layer
  std::atomic<uint64_t> next_chunk_{0};
  std::atomic<uint64_t> layer_expanded_{0};
  std::atomic<uint64_t> layer_discovered_{0};
};

}  // namespace

uint64_t PatternBuildBytes(int cells, int group_size, bool blank_aware) {
  const PlacementIndexer indexer(cells, group_size);
  const uint64_t scratch = (indexer.size() * (cells - group_size) + kStatesPerWord - 1) / kStatesPerWord * 8;
  const uint64_t entries = PackedDistances::Bytes(indexer.size(), kBuildDistanceBits);
  const uint64_t bytes = PackedDistances::Bytes(indexer.size(), 8);
  if (!blank_aware) return std::max(scratch, bytes) + entries;
  // At the end the entries, the extras and their copy behind the entries.
  const uint64_t extras = BlankExtrasBytes(indexer.size(), cells, group_size);
  return std::max(scratch + entries + extras, bytes + 2 * extras + BlankExtrasOffset(indexer.size()));
}

absl::StatusOr<AnonymousMemory> BuildPatternDistances(const Board& goal, const std::vector<int>& group,
                                                      const PatternBuildOptions& options) {
  return Builder(goal, group, options).Run();
}

}  // namespace npuzzle
