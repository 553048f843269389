// Puzzle: the sliding-tile domain of one board shape and goal, the one type
// the searches are written against (after HOG2's split of environment and
// algorithm). Everything about how a state changes lives here: the blank's
// moves, a node's successors in search order (never undoing the move that
// reached it), sliding a tile in either form of a state (Tiles, or a packed
// key), packing and the goal test; and moves played on a Board of any size.
// Heuristics read the goal lookups; algorithms never touch cells directly.
#ifndef NPUZZLE_ENGINE_PUZZLE_H_
#define NPUZZLE_ENGINE_PUZZLE_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/board.h"
#include "engine/moves.h"
#include "engine/successor_order.h"

namespace npuzzle {

// A mutable arrangement kept two ways: which tile sits in each cell, and
// which cell holds each tile (the blank is tile 0). Only the first
// cells() entries of each array mean anything; the rest are left
// uninitialised because searches build one of these per expansion.
struct Tiles {
  std::array<uint8_t, kMaxCells> at;
  std::array<uint8_t, kMaxCells> pos;

  int blank() const { return pos[0]; }

  // The blank moves to `to`; the tile there slides into the old blank cell.
  void MoveBlank(int to) { MoveBlank(pos[0], to); }
  // The same, for callers that keep the blank's cell in a register: reading
  // it back from `pos` puts a store and a load on every move's critical path.
  void MoveBlank(int from, int to) {
    const int tile = at[to];
    at[from] = static_cast<uint8_t>(tile);
    pos[tile] = static_cast<uint8_t>(from);
    at[to] = 0;
    pos[0] = static_cast<uint8_t>(to);
  }

  // Eight cells at a time, inline: a call to memcmp here made IDA*'s loop
  // keep its variables in memory, as a call may change any register that
  // functions need not preserve.
  bool SameCells(const Tiles& other, int cells) const {
    static_assert(kMaxCells % 8 == 0);
    static_assert(std::endian::native == std::endian::little, "the first cell is a word's low byte");
    for (int first = 0; first < cells; first += 8) {
      uint64_t mine, theirs;
      std::memcpy(&mine, at.data() + first, 8);
      std::memcpy(&theirs, other.at.data() + first, 8);
      uint64_t differ = mine ^ theirs;
      if (cells - first < 8) differ &= (uint64_t{1} << (8 * (cells - first))) - 1;
      if (differ != 0) return false;
    }
    return true;
  }
};

// The blank's legal moves from one cell, excluding the move that would undo
// how it got there; in U, D, L, R order.
struct MoveList {
  struct Step {
    uint8_t to;  // the cell the blank moves to
    Dir dir;
  };
  uint8_t count = 0;
  std::array<Step, kNumDirs> steps{};
};

// Stands for "no previous move" where a move that undoes the entry is
// asked for (the start of a search).
inline constexpr uint8_t kNoMove = kNumDirs;

// The successors of one node, handed out one at a time in the order the
// search visits them. Small enough to live in a depth-first stack frame.
class Expansion {
 public:
  Expansion() = default;
  // The steps of `moves` in order `order` (SuccessorOrder::Pick). A
  // function returning by value, not a constructor: out of line, a
  // constructor writes through memory, and the plain order's table entry
  // then took a store and a reload on every node to meet it.
  static Expansion Of(const MoveList& moves, uint8_t order) {
    Expansion e;
    for (int i = moves.count - 1; i >= 0; --i) {
      const MoveList::Step s = moves.steps[SuccessorOrder::Slot(order, moves.count, i)];
      e.queue_ = e.queue_ << kLaneBits | kPresent | static_cast<uint64_t>(s.dir) << 8 | s.to;
    }
    return e;
  }

  bool Next(MoveList::Step* step) {
    if (queue_ == 0) return false;
    *step = {static_cast<uint8_t>(queue_), static_cast<Dir>(queue_ >> 8 & 3)};
    queue_ >>= kLaneBits;
    return true;
  }

 private:
  // The steps not yet handed out, one 16-bit lane each, the next in the low
  // bits: taking one is a shift of a register, where an index into a list
  // put two dependent loads on IDA*'s path to every child.
  static constexpr int kLaneBits = 16;
  static constexpr uint64_t kPresent = 1 << 10;
  uint64_t queue_ = 0;
};

class Puzzle {
 public:
  explicit Puzzle(const Board& goal);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int cells() const { return cells_; }
  const Board& goal() const { return goal_; }
  const Tiles& goal_tiles() const { return goal_tiles_; }
  int GoalCell(int tile) const { return goal_tiles_.pos[tile]; }
  // Tables, not division: heuristics ask these in their inner loops.
  int Row(int cell) const { return row_[cell]; }
  int Col(int cell) const { return col_[cell]; }

  // Where the blank goes from `cell` moving `d`, or -1 off the board.
  int Neighbor(int cell, Dir d) const { return neighbor_[cell][static_cast<int>(d)]; }

  // The successors of a node whose blank is on `blank` and entered by
  // `entry` (a Dir, or kNoMove at the start), in order `order`
  // (SuccessorOrder::Pick). The move back the way it came is left out.
  Expansion Expand(int blank, uint8_t entry, uint8_t order = 0) const {
    return order == 0 ? in_order_[blank][entry] : Expansion::Of(successors_[blank][entry], order);
  }

  // Sliding the tile on `to` into the blank on `blank`, in either form of
  // a state.
  static void Slide(Tiles& s, int blank, int to) { s.MoveBlank(blank, to); }
  // The same, keeping only `at` current (`pos` goes stale): for a
  // depth-first search whose heuristic never reads the state, it halves the
  // stores on every move and on every step back.
  static void SlideCells(Tiles& s, int blank, int to) {
    s.at[blank] = s.at[to];
    s.at[to] = 0;
  }
  template <class Key>
  static void Slide(Key& k, int blank, int to) {
    k.MoveTile(to, blank);
  }
  static int TileAt(const Tiles& s, int cell) { return s.at[cell]; }
  template <class Key>
  static int TileAt(const Key& k, int cell) {
    return k.Get(cell);
  }

  // Packed keys (PackedState) for graph searches. Key must hold cells().
  template <class Key>
  Key Pack(const Tiles& s) const {
    return Key::Pack(s.at, cells_);
  }
  template <class Key>
  void Unpack(const Key& k, Tiles* s) const {
    for (int c = 0; c < cells_; ++c) {
      const int tile = k.Get(c);
      s->at[c] = static_cast<uint8_t>(tile);
      s->pos[tile] = static_cast<uint8_t>(c);
    }
  }

  static Tiles ToTiles(const Board& board);
  bool IsGoal(const Tiles& t) const { return t.SameCells(goal_tiles_, cells_); }

 private:
  int rows_, cols_, cells_;
  Board goal_;
  Tiles goal_tiles_;
  std::array<uint8_t, kMaxCells> row_{};
  std::array<uint8_t, kMaxCells> col_{};
  std::array<std::array<int8_t, kNumDirs>, kMaxCells> neighbor_{};
  std::array<std::array<MoveList, kNumDirs + 1>, kMaxCells> successors_{};
  std::array<std::array<Expansion, kNumDirs + 1>, kMaxCells> in_order_{};  // order 0 of each list
};

// Replaying moves on a Board (any shape): the board reached, and the tile
// that slides at each step.
absl::StatusOr<Board> ApplyMoves(const Board& board, const std::vector<Dir>& moves);
absl::StatusOr<std::vector<int>> TilesMoved(const Board& board, const std::vector<Dir>& moves);

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PUZZLE_H_
