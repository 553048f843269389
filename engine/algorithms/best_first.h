// The best-first family, written once: expand the open state with the lowest
// priority a*g + b*h: greedy is (0, 1), A* (1, 1), weighted A* (1, w) in
// integer form, and A* over the zero heuristic is uniform-cost search. The goal is tested when a state is
// expanded, and a state reached again by a shorter path is reopened, so A*
// stays optimal even with an admissible but inconsistent heuristic.
#ifndef NPUZZLE_ENGINE_ALGORITHMS_BEST_FIRST_H_
#define NPUZZLE_ENGINE_ALGORITHMS_BEST_FIRST_H_

#include <cmath>
#include <numeric>
#include <optional>

#include "engine/bucket_queue.h"
#include "engine/packed_state.h"
#include "engine/state_graph.h"

namespace npuzzle {

template <class Key, Heuristic H>
SearchOutcome BestFirstSearch(const SearchProblem<H>& p, int a, int b) {
  SearchMonitor monitor(p.options);
  WorkCounter c;
  StateGraph<Key, H> graph(p, monitor);
  BucketQueue open;
  auto priority = [a, b](int g, const typename H::Node& h) { return a * g + b * H::Value(h); };
  const uint32_t start = graph.AddStart();
  const int start_h = H::Value(graph[start].h);
  open.Push(priority(0, graph[start].h), start);
  std::optional<uint32_t> found;
  int bound = -1;
  int f;
  uint32_t id;
  while (open.Pop(&f, &id, [&graph](uint32_t i) { return H::Value(graph[i].h); })) {
    auto& r = graph[id];
    if (r.closed || priority(r.g, r.h) != f) continue;  // superseded entry
    if (graph.IsGoal(r.key)) {
      found = id;
      break;
    }
    if (!c.MayExpand(monitor)) break;
    ++c.expanded;
    r.closed = true;
    c.NoteH(H::Value(r.h));
    if (f != bound) monitor.SetBound(bound = f);
    const int g = r.g;
    graph.ForEachSuccessor(id, [&](const auto& child) {
      ++c.generated;
      const auto slot = graph.Insert(child, id, g + 1);
      if (!slot) return false;
      if (!slot.added) {
        auto& seen = graph[slot.id];
        // Greedy ignores g, so a shorter path to a closed state changes
        // nothing it would do.
        if (g + 1 >= seen.g || (a == 0 && seen.closed)) {
          ++c.duplicates;
          return true;
        }
        seen.g = g + 1;
        seen.parent = id;
        seen.dir = child.dir;
        seen.closed = false;
        if (a == 0) return true;  // same priority: its entry is still queued
      }
      open.Push(priority(g + 1, child.h), slot.id);
      return true;
    });
    if (monitor.stopped()) break;
    c.NoteOpen(open.size());
    graph.SetExternalBytes(open.MemoryBytes());
    c.memory_bytes = graph.MemoryBytes() + open.MemoryBytes();
  }
  std::optional<std::vector<Dir>> path;
  if (found) path = graph.PathTo(*found);
  return monitor.Conclude(c, start_h, std::move(path), SearchStatus::kUnsolvable);
}

// Runs best-first search with priority a*g + b*h on the right packing.
template <Heuristic H>
SearchOutcome RunBestFirst(const SearchProblem<H>& p, int a, int b) {
  return WithPackedState(p.puzzle.cells(), [&](auto key) { return BestFirstSearch<decltype(key)>(p, a, b); });
}

struct Greedy {
  template <Heuristic H>
  static SearchOutcome Run(const SearchProblem<H>& p) {
    return RunBestFirst(p, 0, 1);
  }
};

struct AStar {
  template <Heuristic H>
  static SearchOutcome Run(const SearchProblem<H>& p) {
    return RunBestFirst(p, 1, 1);
  }
};

// The weight is taken to hundredths: f = 100 g + round(100 w) h, reduced.
struct WeightedAStar {
  template <Heuristic H>
  static SearchOutcome Run(const SearchProblem<H>& p) {
    const int b = static_cast<int>(std::lround(p.weight * 100));
    const int common = std::gcd(100, b);
    return RunBestFirst(p, 100 / common, b / common);
  }
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ALGORITHMS_BEST_FIRST_H_
