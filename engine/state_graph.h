// StateGraph: the node store shared by the graph searches (BFS, DFS and the
// best-first family). Each reached state is one record (packed board,
// parent, depth, heuristic Node), found again through a hash index, so a
// search only decides which record to expand next.
#ifndef NPUZZLE_ENGINE_STATE_GRAPH_H_
#define NPUZZLE_ENGINE_STATE_GRAPH_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/search_monitor.h"
#include "engine/search_problem.h"
#include "engine/successor_order.h"

namespace npuzzle {

template <class Key, Heuristic H>
class StateGraph {
 public:
  using HNode = typename H::Node;
  static constexpr uint32_t kNoParent = UINT32_MAX;
  // Most 3x3 searches fit without growing.
  static constexpr size_t kInitialCapacity = 4096;

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
        goal_(Key::Pack(problem.puzzle.goal_tiles(), problem.puzzle.cells())) {
    records_.reserve(kInitialCapacity);
    index_.reserve(kInitialCapacity);
  }

  uint32_t AddStart() {
    const Tiles& s = problem_.start;
    return Insert(Key::Pack(s, problem_.puzzle.cells()), problem_.heuristic.Start(s),
                  kNoParent, 0, s.blank(), Dir::kUp)
        ->id;
  }

  // Finds `key` or adds it as a new record; nullopt when growing the store
  // would break the memory limit (the monitor has then stopped the search).
  // The limit is checked before the lookup, so a search may stop at a
  // growth point one insertion early.
  std::optional<Slot> Insert(const Key& key, const HNode& h, uint32_t parent,
                             int g, int blank, Dir dir) {
    if (!ReserveOneMore()) return std::nullopt;
    const uint32_t id = static_cast<uint32_t>(records_.size());
    const auto [it, added] = index_.try_emplace(key, id);
    if (!added) return Slot{it->second, false};
    records_.push_back(Record{key, h, parent, g, static_cast<uint8_t>(blank), dir});
    return Slot{id, true};
  }

  // Calls visit(key, h_node, blank, dir) for each successor of record `id`
  // except its parent, in the (possibly shuffled) successor order; stops
  // early when visit returns false.
  template <class Visit>
  void ForEachSuccessor(uint32_t id, Visit visit) {
    const Record r = records_[id];  // copy: visit may grow records_
    Tiles s;
    if constexpr (ReadsTiles<H>()) r.key.Unpack(problem_.puzzle.cells(), &s);
    const int blank = r.blank;
    const MoveList& moves = problem_.puzzle.Successors(
        blank, r.parent == kNoParent ? kNoMove : static_cast<uint8_t>(r.dir));
    const uint8_t pick = order_.Pick();
    for (int i = 0; i < moves.count; ++i) {
      const MoveList::Step step = moves.steps[order_.Slot(pick, moves.count, i)];
      const int tile = r.key.Get(step.to);
      Key child = r.key;
      child.Set(blank, tile);
      child.Set(step.to, 0);
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

  uint64_t MemoryBytes() const {
    return records_.capacity() * sizeof(Record) + IndexBytes(index_.capacity());
  }

  // Memory the caller holds beside the store (its open list), counted
  // against the same limit.
  void SetExternalBytes(uint64_t bytes) { external_bytes_ = bytes; }

 private:
  static uint64_t IndexBytes(size_t capacity) {
    return capacity * (sizeof(typename decltype(index_)::value_type) + 1);
  }

  // Both containers double when full and hold old and new storage while
  // they copy, so that peak is what must fit.
  bool ReserveOneMore() {
    uint64_t extra = 0;
    if (records_.size() == records_.capacity()) {
      extra += 2 * records_.capacity() * sizeof(Record);
    }
    if (index_.size() + 1 > index_.capacity() * 7 / 8) {
      extra += IndexBytes(2 * index_.capacity() + 1);
    }
    return extra == 0 || monitor_.FitsMemory(MemoryBytes() + extra + external_bytes_);
  }

  const SearchProblem<H>& problem_;
  SearchMonitor& monitor_;
  SuccessorOrder order_;
  const Key goal_;
  std::vector<Record> records_;
  absl::flat_hash_map<Key, uint32_t> index_;
  uint64_t external_bytes_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_STATE_GRAPH_H_
