// Additive disjoint pattern databases (Korf & Felner 2002): each group's
// table gives the moves its tiles need, and the groups' values add up; tiles
// in no group add their Manhattan distance. On a square board whose goal
// blank lies on the main diagonal, the board transposed (with tiles renamed
// so the goal maps to itself) is just as far from the goal, so it is looked
// up in the same tables and the larger sum is used. With several partitions
// of the tiles (Holte et al. 2004), each gives such a sum, and the largest
// of them all is used: each is a lower bound, so their maximum is too. A
// move re-looks up only the group holding the moved tile, in each of these
// views (partition, and board as it is or transposed).
//
// Admissible but not consistent: a table keeps each placement's minimum
// over blank positions, so after a move the value may come from a blank
// position other than the one the blank is in, and drop by more than one.
// A* reopens states for this; IDA* needs only admissibility.
//
// Zero-aware tables (pdb_zero_aware; engine/pdb/blank_extras.h) add the
// extra a group's tiles need from the blank's actual region. Only a move
// of the group's own tiles changes that region: another tile sliding
// swaps the blank with a cell free to the group, inside the same region.
// So a move still looks up only the moved tile's group in each view, with
// the blank where the tile was.
//
// No dual lookups (Felner, Zahavi et al. 2005): a state's dual is as far
// from the goal as the state only while the blank is on its goal cell.
// Otherwise the dual's path moves, in the blank's place, the tile whose
// goal cell the blank is on, and ends with that tile on that cell rather
// than the blank on its own; a table here counts moves to the goal with
// the blank in the goal blank's region, so it bounds that path only for
// groups whose home cells leave the two cells connected (and never for the
// group holding that tile). On 6-6-6-6 the corner group walls the goal
// blank in, so a dual lookup away from it could use two or three of the
// four tables, against four here.
#ifndef NPUZZLE_ENGINE_HEURISTICS_PATTERN_DATABASE_H_
#define NPUZZLE_ENGINE_HEURISTICS_PATTERN_DATABASE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/heuristic_options.h"
#include "engine/heuristics/manhattan.h"
#include "engine/pdb/blank_extras.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/pdb/pattern_table.h"
#include "engine/pdb/placement.h"
#include "engine/puzzle.h"

namespace npuzzle {

class PatternDatabase {
 public:
  // A view is one partition's sum for the board as it is or transposed;
  // the heuristic is the largest view's. The first view is always the
  // first partition untransposed.
  static constexpr int kMaxViews = 2 * kMaxPatternPartitions;
  // Each group's value is a byte of a word, and the sums are full ints, so
  // that a child's node is made in registers. As byte arrays and short
  // sums, it was written a part at a time and read back whole, and the
  // read waited on a failed store forward (a tenth of a 24-puzzle
  // search's profile samples).
  // The groups whose cell indices a Node carries: every preset's. Further
  // groups find theirs from the tiles; carrying all eight would make every
  // node (and a graph search's every state) 32 bytes a view larger.
  // Aligned to 4, not 16, so that a graph search's state is smaller; IDA*
  // runs no slower for it.
  static constexpr int kTrackedGroups = 4;
  using CellIndices = uint32_t __attribute__((vector_size(4 * kTrackedGroups), aligned(4)));
  struct Node {
    std::array<uint64_t, kMaxViews> value{};  // view v's group g's in byte g of value[v]
    std::array<int, kMaxViews> sum{};         // views past the last stay 0
    // Where each tracked group's placement lies in its table's cell layout,
    // a view each: a move changes one of them by a multiply-add, where
    // finding it from the tiles took a multiply-add a tile (a quarter of a
    // 24-puzzle search's time). Vectors, changed whole (AddToLane), for
    // the reason above. A plain array: std::array would drop the vector
    // type's alignment attribute.
    CellIndices at[kMaxViews]{};
  };
  static_assert(kMaxPatternGroups <= sizeof(uint64_t));

  // Checks that the preset or groups partition the goal's tiles, without
  // building anything.
  static absl::Status ValidateOptions(const Board& goal, const HeuristicOptions& options);

  // Resolves the groups and gets their tables (loading or building them,
  // unless options.pdb_held_only).
  static absl::StatusOr<PatternDatabase> Create(const Puzzle& puzzle, const HeuristicOptions& options);

  // Starts loading the tables that are built in the cache but not held by
  // this process (PdbStore::LoadInBackground), so that a later Create with
  // pdb_held_only finds them; returns at once.
  static void LoadInBackground(const Board& goal, const HeuristicOptions& options);

  Node Start(const Tiles& s) const {
    Node n;
    for (size_t v = 0; v < views_.size(); ++v) {
      const View& view = views_[v];
      for (int t = 1; t < cells_; ++t) {
        if (view.group_of[t] < 0) n.sum[v] += manhattan_.Distance(t, s.pos[t]);
      }
      for (size_t g = 0; g < view.groups.size(); ++g) {
        const Group& group = view.groups[g];
        const uint8_t value = group.At(CellsAfter(view, group, s, 0, -1), Cell(view, s.blank()));
        n.value[v] = WithByte(n.value[v], g, value);
        n.sum[v] += value;
        if (group.tracked) n.at[v][g] = group.CellIndex([&](int i) { return Cell(view, s.pos[group.tiles[i]]); });
      }
    }
    return n;
  }

  Node Move(const Tiles& s, const Node& n, int tile, int from, int to) const {
    Node m = MoveFirst(s, n, tile, from, to);
    MoveRest(s, n, tile, from, to, &m, std::numeric_limits<int>::max());
    return m;
  }

  // The first view alone; MoveRest adds the others.
  Node MoveFirst(const Tiles& s, const Node& n, int tile, int from, int to) const {
    Node m = n;
    MoveView(0, s, n, tile, from, to, &m);
    return m;
  }
  static int FirstValue(const Node& m) { return m.sum[0]; }

  // m came from n by MoveFirst, which leaves the other views alone. Stops
  // (false) at the first view whose sum reaches `enough`.
  bool MoveRest(const Tiles& s, const Node& n, int tile, int from, int to, Node* m, int enough) const {
    for (size_t v = 1; v < views_.size(); ++v) {
      MoveView(v, s, n, tile, from, to, m);
      if (m->sum[v] >= enough) return false;
    }
    return true;
  }

  static int Value(const Node& n) { return *std::max_element(n.sum.begin(), n.sum.end()); }

  const PatternPartitions& partitions() const { return partitions_; }
  bool mirrored() const { return mirrored_; }

 private:
  struct Group {
    // The board's tiles that play the table's tiles, in table order: the
    // group's own, or on a transposed view the tiles whose images they are.
    std::vector<uint8_t> tiles;
    PlacementIndexer indexer;
    std::shared_ptr<const PatternTable> table;
    // The table's one layout, read here without going through the table:
    // by cells or by rank; and a zero-aware table's extras by rank.
    const uint8_t* by_cells = nullptr;
    const uint8_t* by_rank = nullptr;
    const uint64_t* extras = nullptr;
    int free_cells = 0;
    bool tracked = false;               // laid out by cells, and among the first kTrackedGroups
    std::vector<uint32_t> cell_weight;  // the place value of tile i's cell in the table's cell layout

    // The value for the placement with tile i on cell_of(i) and the blank
    // on `blank`.
    template <class CellOf>
    uint8_t At(CellOf cell_of, int blank) const {
      if (by_cells != nullptr) return FromCellEntry(by_cells[CellIndex(cell_of)], cell_of, blank);
      CellMask placed;
      const uint64_t rank = indexer.RankBy(cell_of, &placed);
      return extras == nullptr ? by_rank[rank] : PlusExtra(by_rank[rank], rank, placed, blank);
    }

    // The value from the placement's entry in the cell layout: a zero-aware
    // table's marked entries go on to the extras.
    template <class CellOf>
    uint8_t FromCellEntry(uint8_t entry, CellOf cell_of, int blank) const {
      if (extras == nullptr || (entry & kHasBlankExtras) == 0) [[likely]] {
        return entry;
      }
      CellMask placed;
      const uint64_t rank = indexer.RankBy(cell_of, &placed);
      return PlusExtra(entry & ~kHasBlankExtras, rank, placed, blank);
    }

    uint8_t PlusExtra(int distance, uint64_t rank, CellMask placed, int blank) const {
      return static_cast<uint8_t>(distance +
                                  BlankExtraAt(extras, BlankExtraField(rank, free_cells, FreeRank(placed, blank))));
    }

    // The placement's place in the cell layout, which the table has.
    template <class CellOf>
    uint32_t CellIndex(CellOf cell_of) const {
      uint32_t index = 0;
      for (size_t i = 0; i < cell_weight.size(); ++i) index += cell_of(static_cast<int>(i)) * cell_weight[i];
      return index;
    }
  };

  // Where a group's tiles are once `tile` (0: none) has moved to `to`, on
  // the board, or on the transposed board if `transpose` is given.
  struct CellsAfterMove {
    const std::vector<uint8_t>& tiles;
    const Tiles& s;
    int tile;
    int to;
    const uint8_t* transpose = nullptr;

    int operator()(int i) const {
      const int t = tiles[i];
      const int cell = t == tile ? to : s.pos[t];
      return transpose == nullptr ? cell : transpose[cell];
    }
  };

  struct View {
    bool transposed = false;
    std::vector<Group> groups;
    std::array<int8_t, kMaxCells> group_of{};  // -1: in no group
    // A tile's place value in its group's cell layout.
    std::array<uint32_t, kMaxCells> cell_weight_of{};
  };

  int Cell(const View& view, int cell) const { return view.transposed ? transpose_[cell] : cell; }
  CellsAfterMove CellsAfter(const View& view, const Group& group, const Tiles& s, int tile, int to) const {
    return {group.tiles, s, tile, to, view.transposed ? transpose_.data() : nullptr};
  }

  // Moves view v of n into m. Manhattan distance needs no transposing: the
  // transposed goal puts each tile's image where the image of its goal is.
  void MoveView(size_t v, const Tiles& s, const Node& n, int tile, int from, int to, Node* m) const {
    const View& view = views_[v];
    const int g = view.group_of[tile];
    if (g < 0) {
      m->sum[v] = n.sum[v] + manhattan_.Distance(tile, to) - manhattan_.Distance(tile, from);
      return;
    }
    const Group& group = view.groups[g];
    uint8_t value;
    if (group.tracked) {
      const uint32_t delta =
          static_cast<uint32_t>(int64_t{Cell(view, to) - Cell(view, from)} * view.cell_weight_of[tile]);
      AddToLane(m->at[v], g, delta);
      value = group.FromCellEntry(group.by_cells[n.at[v][g] + delta], CellsAfter(view, group, s, tile, to),
                                  Cell(view, from));
    } else {
      value = group.At(CellsAfter(view, group, s, tile, to), Cell(view, from));
    }
    m->sum[v] = n.sum[v] + value - ByteOf(n.value[v], g);
    m->value[v] = WithByte(n.value[v], g, value);
  }

  // Adds `delta` to lane g, writing the vector whole.
  static void AddToLane(CellIndices& v, int g, uint32_t delta) {
    static constexpr CellIndices kLanes = {0, 1, 2, 3};
    static_assert(sizeof kLanes == sizeof(uint32_t) * kTrackedGroups);
    const auto lane = kLanes == static_cast<uint32_t>(g);  // all ones in lane g, as signed ints
    v += reinterpret_cast<const CellIndices&>(lane) & delta;
  }

  static int ByteOf(uint64_t word, size_t g) { return static_cast<int>(word >> (8 * g) & 0xFF); }
  static uint64_t WithByte(uint64_t word, size_t g, uint8_t v) {
    return (word & ~(uint64_t{0xFF} << (8 * g))) | uint64_t{v} << (8 * g);
  }

  explicit PatternDatabase(const Puzzle& puzzle) : cells_(puzzle.cells()), manhattan_(puzzle) {}

  int cells_;
  Manhattan manhattan_;
  bool mirrored_ = false;
  PatternPartitions partitions_;
  std::vector<View> views_;
  std::array<uint8_t, kMaxCells> transpose_{};  // cell (r, c) -> (c, r)
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTICS_PATTERN_DATABASE_H_
