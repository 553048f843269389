// StateGraph: the node store shared by the graph searches (BFS, DFS and the
// best-first family). Each reached state is one record (packed board,
// parent, depth, heuristic Node), found again through a hash index, so a
// search only decides which record to expand next. States change only
// through the Puzzle domain; both stores grow in bounded steps, each
// checked against the memory limit before it allocates.
#ifndef NPUZZLE_ENGINE_STATE_GRAPH_H_
#define NPUZZLE_ENGINE_STATE_GRAPH_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "engine/chunked_vector.h"
#include "engine/search_monitor.h"
#include "engine/search_problem.h"
#include "engine/state_index.h"
#include "engine/successor_order.h"

namespace npuzzle {

template <class Key, Heuristic H>
class StateGraph {
 public:
  using HNode = typename H::Node;
  static constexpr uint32_t kNoParent = UINT32_MAX;
  static constexpr size_t kMinReserve = 64;
  static constexpr int kMaxReserveShift = 7;  // room for 8,192 states: a 128 KB index

  struct Record {
    Key key;
    HNode h;
    uint32_t parent;
    int32_t g;
    uint8_t blank;
    Dir dir;  // the move that reached this record from its parent
    bool closed;
  };

  // A successor of an expanded record, ready to insert.
  struct Child {
    Key key;
    HNode h;
    uint64_t hash;
    int blank;
    Dir dir;  // the move from the parent
  };

  // Where an insertion landed; `added` is false when the state was known.
  // False when growing a store would break the memory limit (the monitor
  // has then stopped the search). Eight bytes, returned in a register: an
  // optional here cost A* a store-forwarding stall per insertion.
  struct Slot {
    static constexpr uint32_t kNoRoom = UINT32_MAX;
    uint32_t id;
    bool added;
    explicit operator bool() const { return id != kNoRoom; }
  };

  StateGraph(const SearchProblem<H>& problem, SearchMonitor& monitor)
      : problem_(problem),
        monitor_(monitor),
        order_(problem.options.seed),
        goal_(problem.puzzle.template Pack<Key>(problem.puzzle.goal_tiles())) {}

  uint32_t AddStart() {
    const Tiles& s = problem_.start;
    const HNode h = problem_.heuristic.Start(s);
    // Growing the index from nothing by doubling costs small searches
    // (most 3x3 solves) a third of their time; reserving for the worst
    // case makes trivial solves pay for memory they never touch. Size it
    // from the start's distance estimate instead, within a small cap.
    const size_t expected = size_t{kMinReserve} << std::min(H::Value(h) / 2, kMaxReserveShift);
    if (monitor_.FitsMemory(StateIndex::ReserveBytes(expected))) index_.Reserve(expected);
    const Key key = problem_.puzzle.template Pack<Key>(s);
    return Insert(Child{key, h, key.Hash(), s.blank(), Dir::kUp}, kNoParent, 0).id;
  }

  // Finds the child's state or adds it as a new record reached from
  // `parent` at depth `g`. The memory limit is checked before the lookup,
  // so a search may stop at a growth point one insertion early.
  Slot Insert(const Child& child, uint32_t parent, int g) {
    if (index_.NeedsGrowth(child.hash) || records_.GrowthBytes() != 0) [[unlikely]] {
      if (!Grow(child.hash)) return Slot{Slot::kNoRoom, false};
    }
    const uint32_t id = static_cast<uint32_t>(records_.size());
    const auto found =
        index_.FindOrAdd(child.hash, id, [&](uint32_t other) { return records_[other].key == child.key; });
    if (!found.added) return Slot{found.id, false};
    // Field by field into place: a temporary Record copied in whole stalled
    // on its own partial writes.
    Record& r = records_.emplace_back();
    r.key = child.key;
    r.h = child.h;
    r.parent = parent;
    r.g = g;
    r.blank = static_cast<uint8_t>(child.blank);
    r.dir = child.dir;
    r.closed = false;
    return Slot{id, true};
  }

  // Calls visit(child) for each successor of record `id` except its
  // parent, in the (possibly shuffled) successor order; stops early when
  // visit returns false. All children are made first, so that their index
  // slots are fetched from memory in parallel rather than one miss at a
  // time.
  template <class Visit>
  void ForEachSuccessor(uint32_t id, Visit visit) {
    const Record& r = records_[id];
    const Puzzle& puzzle = problem_.puzzle;
    Tiles s;
    if constexpr (ReadsTiles<H>()) puzzle.Unpack(r.key, &s);
    const int blank = r.blank;
    Expansion successors =
        puzzle.Expand(blank, r.parent == kNoParent ? kNoMove : static_cast<uint8_t>(r.dir), order_.Pick());
    std::array<Child, 4> children;
    int count = 0;
    for (MoveList::Step step; successors.Next(&step);) {
      Child& c = children[count++];
      c.key = r.key;
      const int tile = Puzzle::TileAt(c.key, step.to);
      Puzzle::Slide(c.key, blank, step.to);
      c.h = problem_.heuristic.Move(s, r.h, tile, step.to, blank);
      c.hash = c.key.Hash();
      c.blank = step.to;
      c.dir = step.dir;
      index_.Prefetch(c.hash);
    }
    for (int i = 0; i < count; ++i) {
      if (!visit(children[i])) return;
    }
  }

  bool IsGoal(const Key& key) const { return key == goal_; }
  Record& operator[](uint32_t id) { return records_[id]; }
  size_t size() const { return records_.size(); }

  std::vector<Dir> PathTo(uint32_t id) const {
    std::vector<Dir> path;
    for (; records_[id].parent != kNoParent; id = records_[id].parent) {
      path.push_back(records_[id].dir);
    }
    std::reverse(path.begin(), path.end());
    return path;
  }

  uint64_t MemoryBytes() const { return records_.capacity() * sizeof(Record) + index_.MemoryBytes(); }

  // Memory the caller holds beside the store (its open list), counted
  // against the same limit.
  void SetExternalBytes(uint64_t bytes) { external_bytes_ = bytes; }

 private:
  // Makes room for one more record and index entry, unless that would
  // break the memory limit. Out of line: it runs once in thousands of
  // insertions.
  [[gnu::noinline]] bool Grow(uint64_t hash) {
    const bool index_grows = index_.NeedsGrowth(hash);
    const uint64_t growth = records_.GrowthBytes() + (index_grows ? index_.GrowthBytes(hash) : 0);
    if (!monitor_.FitsMemory(MemoryBytes() + growth + external_bytes_)) return false;
    if (index_grows) index_.Grow(hash);
    return true;
  }

  const SearchProblem<H>& problem_;
  SearchMonitor& monitor_;
  SuccessorOrder order_;
  const Key goal_;
  ChunkedVector<Record> records_;
  StateIndex index_;
  uint64_t external_bytes_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_STATE_GRAPH_H_
