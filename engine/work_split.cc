#include "engine/work_split.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "engine/puzzle.h"

namespace npuzzle {
namespace {

struct Node {
  Tiles tiles;
  uint8_t entry = kNoMove;
  int machine = MovePruning::kStart;
  std::vector<Dir> path;
};

// The children a node's allowed moves reach, in U, D, L, R order.
template <class Visit>
void ForEachChild(const Puzzle& puzzle, const MovePruning* pruning, const Node& n, Visit visit) {
  Expansion successors = puzzle.Expand(n.tiles.blank(), n.entry);
  for (MoveList::Step step; successors.Next(&step);) {
    const int machine = pruning ? pruning->Next(n.machine, step.dir) : n.machine;
    if (machine == MovePruning::kPruned) continue;
    Node child{n.tiles, static_cast<uint8_t>(step.dir), machine, n.path};
    Puzzle::Slide(child.tiles, n.tiles.blank(), step.to);
    child.path.push_back(step.dir);
    visit(std::move(child));
  }
}

// Replays `path` from the start through the machine; false if it rejects a
// move (the path then roots no subtree).
bool Replay(const Puzzle& puzzle, const MovePruning* pruning, const std::vector<Dir>& path, Node* n) {
  for (const Dir d : path) {
    if (pruning && (n->machine = pruning->Next(n->machine, d)) == MovePruning::kPruned) return false;
    Puzzle::Slide(n->tiles, n->tiles.blank(), puzzle.Neighbor(n->tiles.blank(), d));
    n->entry = static_cast<uint8_t>(d);
  }
  n->path = path;
  return true;
}

}  // namespace

SplitFrontier GrowSplitFrontier(const Board& start, const Board& goal, const MovePruning* pruning, size_t enough,
                                int max_depth) {
  const Puzzle puzzle(goal);
  const int cells = puzzle.cells();
  auto key = [cells](const Tiles& t) { return std::string(reinterpret_cast<const char*>(t.at.data()), cells); };
  std::vector<Node> level{{Puzzle::ToTiles(start)}};
  // Every node seen at any depth: one reached again, by a later or longer
  // sequence, leads to no solution the earlier one does not.
  absl::flat_hash_set<std::string> seen{key(level[0].tiles)};
  SplitFrontier frontier;
  while (level.size() < enough && frontier.depth < max_depth && !puzzle.IsGoal(level[0].tiles)) {
    std::vector<Node> next;
    bool goal_next = false;
    for (const Node& n : level) {
      ForEachChild(puzzle, pruning, n, [&](Node child) {
        if (!seen.insert(key(child.tiles)).second) return;
        goal_next |= puzzle.IsGoal(child.tiles);
        next.push_back(std::move(child));
      });
    }
    if (goal_next || next.empty()) break;
    level = std::move(next);
    ++frontier.depth;
  }
  for (Node& n : level) frontier.roots.push_back(std::move(n.path));
  return frontier;
}

std::vector<std::vector<Dir>> SplitSubtree(const Board& start, const Board& goal, const MovePruning* pruning,
                                           const std::vector<Dir>& root) {
  const Puzzle puzzle(goal);
  Node n{Puzzle::ToTiles(start)};
  std::vector<std::vector<Dir>> children;
  if (!Replay(puzzle, pruning, root, &n)) return children;
  ForEachChild(puzzle, pruning, n, [&](Node child) { children.push_back(std::move(child.path)); });
  return children;
}

}  // namespace npuzzle
