#include "engine/heuristics/pattern_database.h"

#include <algorithm>
#include <numeric>

#include "engine/pdb/pdb_store.h"

namespace npuzzle {

absl::Status PatternDatabase::ValidateOptions(const Board& goal, const HeuristicOptions& options) {
  return ResolvePatternGroups(goal, options.pdb_preset, options.pdb_groups).status();
}

absl::StatusOr<PatternDatabase> PatternDatabase::Create(const Puzzle& puzzle, const HeuristicOptions& options) {
  absl::StatusOr<PatternGroups> groups = ResolvePatternGroups(puzzle.goal(), options.pdb_preset, options.pdb_groups);
  if (!groups.ok()) return groups.status();

  PatternDatabase db(puzzle);
  db.group_tiles_ = *groups;
  db.group_of_.fill(-1);
  for (size_t g = 0; g < groups->size(); ++g) {
    for (int t : (*groups)[g]) db.group_of_[t] = static_cast<int8_t>(g);
  }

  // Transposing maps the goal to itself once tiles are renamed goal[c] ->
  // goal[transpose(c)], provided the blank keeps its cell.
  const int side = puzzle.rows();
  const int goal_blank = puzzle.GoalCell(0);
  db.mirrored_ = options.pdb_mirror && puzzle.rows() == puzzle.cols() && goal_blank / side == goal_blank % side;
  std::array<uint8_t, kMaxCells> mirror_name{};  // tile -> its name on the transposed board
  for (int c = 0; c < puzzle.cells(); ++c) {
    db.transpose_[c] = static_cast<uint8_t>(puzzle.Col(c) * puzzle.cols() + puzzle.Row(c));
  }
  if (db.mirrored_) {
    for (int c = 0; c < puzzle.cells(); ++c) {
      mirror_name[puzzle.goal().at(c)] = static_cast<uint8_t>(puzzle.goal().at(db.transpose_[c]));
    }
  }
  db.mirror_group_of_.fill(-1);
  for (int t = 1; t < puzzle.cells() && db.mirrored_; ++t) db.mirror_group_of_[t] = db.group_of_[mirror_name[t]];

  const PdbBuildOptions build{options.pdb_build_threads, options.on_message, options.build_limits,
                              options.pdb_cache_bytes};
  PdbStore& store = PdbStore::ForDirectory(options.pdb_dir);
  // Largest first: a build's scratch space is the peak, and it is lowest
  // with the fewest finished tables held beside it (7-8: by the 7-tile
  // table's 58 MB).
  std::vector<size_t> order(groups->size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return (*groups)[a].size() > (*groups)[b].size(); });
  std::vector<std::shared_ptr<const PatternTable>> tables(groups->size());
  for (size_t g : order) {
    absl::StatusOr<std::shared_ptr<const PatternTable>> table =
        store.Table({puzzle.goal(), (*groups)[g], options.pdb_zero_aware}, build);
    if (!table.ok()) return table.status();
    tables[g] = *std::move(table);
  }
  for (size_t g = 0; g < groups->size(); ++g) {
    const std::vector<int>& tiles = (*groups)[g];
    Group group{.indexer = PlacementIndexer(puzzle.cells(), static_cast<int>(tiles.size())),
                .table = std::move(tables[g])};
    group.by_cells = group.table->by_cells();
    group.by_rank = group.table->data();
    group.extras = group.table->extras();
    group.free_cells = puzzle.cells() - static_cast<int>(tiles.size());
    group.tracked = group.by_cells != nullptr && g < PatternDatabase::kTrackedGroups;
    group.cell_weight.resize(tiles.size());
    for (uint32_t i = tiles.size(), weight = 1; i-- > 0; weight *= puzzle.cells()) group.cell_weight[i] = weight;
    for (size_t i = 0; i < tiles.size(); ++i) {
      group.tiles.push_back(static_cast<uint8_t>(tiles[i]));
      db.cell_weight_of_[tiles[i]] = group.cell_weight[i];
      if (db.mirrored_) {
        // The original tile whose mirror image is tiles[i].
        for (int u = 1; u < puzzle.cells(); ++u) {
          if (mirror_name[u] != tiles[i]) continue;
          group.mirror_tiles.push_back(static_cast<uint8_t>(u));
          db.mirror_cell_weight_of_[u] = group.cell_weight[i];
        }
      }
    }
    db.groups_.push_back(std::move(group));
  }
  return db;
}

}  // namespace npuzzle
