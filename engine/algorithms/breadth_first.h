// Breadth-first graph search: expands states in order of depth and stops
// at the first generated goal, so the answer is a shortest one.
#ifndef NPUZZLE_ENGINE_ALGORITHMS_BREADTH_FIRST_H_
#define NPUZZLE_ENGINE_ALGORITHMS_BREADTH_FIRST_H_

#include <optional>

#include "engine/packed_state.h"
#include "engine/state_graph.h"

namespace npuzzle {

template <class Key, Heuristic H>
SearchOutcome BreadthFirstSearch(const SearchProblem<H>& p) {
  SearchMonitor monitor(p.options);
  WorkCounter c;
  StateGraph<Key, H> graph(p, monitor);
  const uint32_t start = graph.AddStart();
  std::optional<uint32_t> found;
  if (graph.IsGoal(graph[start].key)) found = start;
  // Records are appended in depth order, so the store is the FIFO queue.
  for (uint32_t next = 0; !found && next < graph.size() && c.MayExpand(monitor); ++next) {
    ++c.expanded;
    const int g = graph[next].g;
    graph.ForEachSuccessor(next, [&](const auto& child) {
      ++c.generated;
      const auto slot = graph.Insert(child, next, g + 1);
      if (!slot) return false;
      if (!slot.added) {
        ++c.duplicates;
        return true;
      }
      if (graph.IsGoal(child.key)) found = slot.id;
      return !found;
    });
    if (monitor.stopped()) break;
    c.NoteOpen(graph.size() - next - 1);
    c.memory_bytes = graph.MemoryBytes();
  }
  std::optional<std::vector<Dir>> path;
  if (found) path = graph.PathTo(*found);
  return monitor.Conclude(c, 0, std::move(path), SearchStatus::kUnsolvable);
}

struct BreadthFirst {
  template <Heuristic H>
  static SearchOutcome Run(const SearchProblem<H>& p) {
    return WithPackedState(p.puzzle.cells(), [&](auto key) { return BreadthFirstSearch<decltype(key)>(p); });
  }
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ALGORITHMS_BREADTH_FIRST_H_
