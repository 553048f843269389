// Additive disjoint pattern databases (Korf & Felner 2002): each group's
// table gives the moves its tiles need, and the groups' values add up; tiles
// in no group add their Manhattan distance. On a square board whose goal
// blank lies on the main diagonal, the board transposed (with tiles renamed
// so the goal maps to itself) is just as far from the goal, so it is looked
// up in the same tables and the larger sum is used. A move re-ranks only the
// group holding the moved tile (and its mirror group).
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
// So a move still looks up only the moved tile's group (and its mirror),
// with the blank where the tile was.
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
  // Each group's value is a byte of a word, and the sums are full ints, so
  // that a child's node is made in registers. As byte arrays and short
  // sums, it was written a part at a time and read back whole, and the
  // read waited on a failed store forward (a tenth of a 24-puzzle
  // search's profile samples).
  // The groups whose cell indices a Node carries: every preset's. Further
  // groups find theirs from the tiles; carrying all eight would make every
  // node (and a graph search's every state) 32 bytes larger. Aligned to 4,
  // not 16, so that a graph search's state is 80 bytes on 4x4 rather than
  // 96 (it was 48 without the indices); IDA* runs no slower for it.
  static constexpr int kTrackedGroups = 4;
  using CellIndices = uint32_t __attribute__((vector_size(4 * kTrackedGroups), aligned(4)));
  struct Node {
    uint64_t value = 0;   // group g's in byte g
    uint64_t mirror = 0;  // the same for the transposed board
    int sum = 0;
    int mirror_sum = 0;
    // Where each tracked group's placement lies in its table's cell layout,
    // and the mirror image's: a move changes one of each by a multiply-add,
    // where finding it from the tiles took a multiply-add a tile (a quarter
    // of a 24-puzzle search's time). Vectors, changed whole (AddToLane),
    // for the reason above.
    CellIndices at{};
    CellIndices mirror_at{};
  };
  static_assert(kMaxPatternGroups <= sizeof(uint64_t));

  // Checks that the preset or groups partition the goal's tiles, without
  // building anything.
  static absl::Status ValidateOptions(const Board& goal, const HeuristicOptions& options);

  // Resolves the groups and gets their tables (loading or building them).
  static absl::StatusOr<PatternDatabase> Create(const Puzzle& puzzle, const HeuristicOptions& options);

  Node Start(const Tiles& s) const {
    Node n;
    for (int t = 1; t < cells_; ++t) {
      if (group_of_[t] < 0) n.sum += manhattan_.Distance(t, s.pos[t]);
      if (mirrored_ && mirror_group_of_[t] < 0) n.mirror_sum += manhattan_.Distance(t, s.pos[t]);
    }
    for (size_t g = 0; g < groups_.size(); ++g) {
      const Group& group = groups_[g];
      const uint8_t v = group.At(CellsAfter(group, s, 0, -1), s.blank());
      n.value = WithByte(n.value, g, v);
      n.sum += v;
      if (group.tracked) n.at[g] = group.CellIndex([&](int i) { return s.pos[group.tiles[i]]; });
      if (mirrored_) {
        const uint8_t m = group.At(MirrorCellsAfter(group, s, 0, -1), transpose_[s.blank()]);
        n.mirror = WithByte(n.mirror, g, m);
        n.mirror_sum += m;
        if (group.tracked) {
          n.mirror_at[g] = group.CellIndex([&](int i) { return transpose_[s.pos[group.mirror_tiles[i]]]; });
        }
      }
    }
    return n;
  }

  Node Move(const Tiles& s, const Node& n, int tile, int from, int to) const {
    Node m = MoveFirst(s, n, tile, from, to);
    MoveRest(s, n, tile, from, to, &m);
    return m;
  }

  // The regular lookup alone; MoveRest adds the mirror's.
  Node MoveFirst(const Tiles& s, const Node& n, int tile, int from, int to) const {
    Node m = n;
    const int g = group_of_[tile];
    if (g >= 0) {
      uint8_t v;
      if (const Group& group = groups_[g]; group.tracked) {
        const uint32_t delta = Delta(tile, from, to);
        AddToLane(m.at, g, delta);
        v = group.FromCellEntry(group.by_cells[n.at[g] + delta], CellsAfter(group, s, tile, to), from);
      } else {
        v = group.At(CellsAfter(group, s, tile, to), from);
      }
      m.sum += v - ByteOf(m.value, g);
      m.value = WithByte(m.value, g, v);
    } else {
      m.sum += manhattan_.Distance(tile, to) - manhattan_.Distance(tile, from);
    }
    return m;
  }
  static int FirstValue(const Node& m) { return m.sum; }

  void MoveRest(const Tiles& s, const Node& n, int tile, int from, int to, Node* m) const {
    if (!mirrored_) return;
    const int mg = mirror_group_of_[tile];
    if (mg >= 0) {
      uint8_t v;
      if (const Group& group = groups_[mg]; group.tracked) {
        const uint32_t delta = MirrorDelta(tile, from, to);
        AddToLane(m->mirror_at, mg, delta);  // m came from n by MoveFirst, which leaves mirror_at alone
        v = group.FromCellEntry(group.by_cells[n.mirror_at[mg] + delta], MirrorCellsAfter(group, s, tile, to),
                                transpose_[from]);
      } else {
        v = group.At(MirrorCellsAfter(group, s, tile, to), transpose_[from]);
      }
      m->mirror_sum = n.mirror_sum + v - ByteOf(n.mirror, mg);
      m->mirror = WithByte(n.mirror, mg, v);
    } else {
      m->mirror_sum = n.mirror_sum + manhattan_.Distance(tile, to) - manhattan_.Distance(tile, from);
    }
  }

  static int Value(const Node& n) { return std::max(n.sum, n.mirror_sum); }

  const PatternGroups& groups() const { return group_tiles_; }
  bool mirrored() const { return mirrored_; }

 private:
  struct Group {
    std::vector<uint8_t> tiles;         // the group's tiles, in table order
    std::vector<uint8_t> mirror_tiles;  // the tiles that play them on the transposed board
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

  // What `tile` moving from `from` to `to` adds to its group's cell index
  // (modulo 2^32); and the same for the mirror group its image is in.
  uint32_t Delta(int tile, int from, int to) const {
    return static_cast<uint32_t>(int64_t{to - from} * cell_weight_of_[tile]);
  }
  uint32_t MirrorDelta(int tile, int from, int to) const {
    return static_cast<uint32_t>(int64_t{transpose_[to] - transpose_[from]} * mirror_cell_weight_of_[tile]);
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

  // Where a group's tiles are once `tile` (0: none) has moved to `to`, on
  // the board, or on the transposed board if `transpose` is given (then
  // `tiles` are the ones playing the group's there).
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
  static CellsAfterMove CellsAfter(const Group& group, const Tiles& s, int tile, int to) {
    return {group.tiles, s, tile, to};
  }
  CellsAfterMove MirrorCellsAfter(const Group& group, const Tiles& s, int tile, int to) const {
    return {group.mirror_tiles, s, tile, to, transpose_.data()};
  }

  int cells_;
  Manhattan manhattan_;
  bool mirrored_ = false;
  PatternGroups group_tiles_;
  std::vector<Group> groups_;
  std::array<int8_t, kMaxCells> group_of_{};         // -1: in no group
  std::array<int8_t, kMaxCells> mirror_group_of_{};  // the group a tile's mirror image is in
  std::array<uint8_t, kMaxCells> transpose_{};       // cell (r, c) -> (c, r)
  // A tile's place value in its group's cell layout, and its image's in
  // the mirror group's.
  std::array<uint32_t, kMaxCells> cell_weight_of_{};
  std::array<uint32_t, kMaxCells> mirror_cell_weight_of_{};
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTICS_PATTERN_DATABASE_H_
