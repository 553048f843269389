// Depth-first graph search with an explicit stack (no recursion to
// overflow): follows one line of moves as deep as it goes, remembering every
// state it has seen. With a depth limit, a state reached again by a shorter
// path is explored again so no solution within the limit is missed. Answers
// are rarely shortest.
#ifndef NPUZZLE_ENGINE_ALGORITHMS_DEPTH_FIRST_H_
#define NPUZZLE_ENGINE_ALGORITHMS_DEPTH_FIRST_H_

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "engine/packed_state.h"
#include "engine/state_graph.h"

namespace npuzzle {

template <class Key, Heuristic H>
SearchOutcome DepthFirstSearch(const SearchProblem<H>& p) {
  SearchMonitor monitor(p.options);
  WorkCounter c;
  StateGraph<Key, H> graph(p, monitor);
  const int max_depth = p.options.limits.max_depth;
  const uint32_t start = graph.AddStart();
  std::optional<uint32_t> found;
  if (graph.IsGoal(graph[start].key)) found = start;
  bool cut_off = false;
  std::vector<std::pair<uint32_t, int>> stack = {{start, 0}};  // record, depth
  while (!found && !stack.empty()) {
    // Named copies, not a structured binding: the successor lambda below
    // captures them, which clang before 16 does not allow for bindings.
    const auto id = stack.back().first;
    const auto g = stack.back().second;
    stack.pop_back();
    if (graph[id].g != g || graph[id].closed) continue;  // superseded entry
    if (max_depth != 0 && g >= max_depth) {
      cut_off = true;
      continue;
    }
    if (!c.MayExpand(monitor)) break;
    ++c.expanded;
    graph[id].closed = true;
    const size_t first_child = stack.size();
    graph.ForEachSuccessor(id, [&](const auto& child) {
      ++c.generated;
      const auto slot = graph.Insert(child, id, g + 1);
      if (!slot) return false;
      if (!slot.added) {
        auto& seen = graph[slot.id];
        if (max_depth == 0 || seen.g <= g + 1) {
          ++c.duplicates;
          return true;
        }
        seen.g = g + 1;
        seen.parent = id;
        seen.dir = child.dir;
        seen.closed = false;
      }
      if (graph.IsGoal(child.key)) found = slot.id;
      stack.emplace_back(slot.id, g + 1);
      return !found;
    });
    if (monitor.stopped()) break;
    // The first successor in move order goes on top.
    std::reverse(stack.begin() + first_child, stack.end());
    c.NoteOpen(stack.size());
    c.memory_bytes = graph.MemoryBytes() + stack.capacity() * sizeof(stack[0]);
    graph.SetExternalBytes(stack.capacity() * sizeof(stack[0]));
  }
  std::optional<std::vector<Dir>> path;
  if (found) path = graph.PathTo(*found);
  return monitor.Conclude(c, 0, std::move(path), cut_off ? SearchStatus::kDepthLimit : SearchStatus::kUnsolvable);
}

struct DepthFirst {
  template <Heuristic H>
  static SearchOutcome Run(const SearchProblem<H>& p) {
    return WithPackedState(p.puzzle.cells(), [&](auto key) { return DepthFirstSearch<decltype(key)>(p); });
  }
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ALGORITHMS_DEPTH_FIRST_H_
