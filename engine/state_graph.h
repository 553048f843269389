// StateGraph: the node store shared by the graph searches (BFS, DFS and the
// best-first family). Each reached state is one record (packed board,
// parent, depth, heuristic Node), found again through a hash index, so a
// search only decides which record to expand next. States change only
// through the Puzzle domain; both stores grow in bounded steps, each
// checked against the memory limit before it allocates.
#ifndef NPUZZLE_ENGINE_STATE_GRAPH_H_
#define NPUZZLE_ENGINE_STATE_GRAPH_H_

#include <algorithm>
#include <cstdint>
#include <optional>
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

  struct Record {
    Key key;
    HNode h;
    uint32_t parent;
    int32_t g;
    uint8_t blank;
    Dir dir;  // the move that reached this record from its parent
    bool closed = false;
  };

  // Where an insertion landed; `added` is false when the state was known.
  struct Slot {
    uint32_t id;
    bool added;
  };

  StateGraph(const SearchProblem<H>& problem, SearchMonitor& monitor)
      : problem_(problem),
        monitor_(monitor),
        order_(problem.options.seed),
        goal_(problem.puzzle.template Pack<Key>(problem.puzzle.goal_tiles())) {}

  uint32_t AddStart() {
    const Tiles& s = problem_.start;
    return Insert(problem_.puzzle.template Pack<Key>(s), problem_.heuristic.Start(s), kNoParent, 0,
                  s.blank(), Dir::kUp)
        ->id;
  }

  // Finds `key` or adds it as a new record; nullopt when growing a store
  // would break the memory limit (the monitor has then stopped the search).
  // The limit is checked before the lookup, so a search may stop at a
  // growth point one insertion early.
  std::optional<Slot> Insert(const Key& key, const HNode& h, uint32_t parent, int g, int blank,
                             Dir dir) {
    const size_t hash = index_.Hash(key);
    const uint64_t growth = records_.GrowthBytes() + index_.GrowthBytes(hash);
    if (growth != 0 && !monitor_.FitsMemory(MemoryBytes() + growth + external_bytes_)) {
      return std::nullopt;
    }
    const uint32_t id = static_cast<uint32_t>(records_.size());
    const auto found = index_.FindOrAdd(key, hash, id);
    if (!found.added) return Slot{found.id, false};
    records_.push_back(Record{key, h, parent, g, static_cast<uint8_t>(blank), dir});
    return Slot{id, true};
  }

  // Calls visit(key, h_node, blank, dir) for each successor of record `id`
  // except its parent, in the (possibly shuffled) successor order; stops
  // early when visit returns false.
  template <class Visit>
  void ForEachSuccessor(uint32_t id, Visit visit) {
    const Record r = records_[id];  // copy: visit may grow records_
    const Puzzle& puzzle = problem_.puzzle;
    Tiles s;
    if constexpr (ReadsTiles<H>()) puzzle.Unpack(r.key, &s);
    const int blank = r.blank;
    Expansion successors =
        puzzle.Expand(blank, r.parent == kNoParent ? kNoMove : static_cast<uint8_t>(r.dir), order_.Pick());
    for (MoveList::Step step; successors.Next(&step);) {
      Key child = r.key;
      const int tile = Puzzle::TileAt(child, step.to);
      Puzzle::Slide(child, blank, step.to);
      if (!visit(child, problem_.heuristic.Move(s, r.h, tile, step.to, blank), step.to, step.dir)) {
        return;
      }
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
  const SearchProblem<H>& problem_;
  SearchMonitor& monitor_;
  SuccessorOrder order_;
  const Key goal_;
  ChunkedVector<Record> records_;
  StateIndex<Key> index_;
  uint64_t external_bytes_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_STATE_GRAPH_H_
