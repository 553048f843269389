#include "engine/heuristics/pattern_database.h"

#include <algorithm>
#include <map>

#include "engine/pdb/pdb_store.h"

namespace npuzzle {

absl::Status PatternDatabase::ValidateOptions(const Board& goal, const HeuristicOptions& options) {
  return ResolvePatternPartitions(goal, options.pdb_preset, options.pdb_groups).status();
}

void PatternDatabase::LoadInBackground(const Board& goal, const HeuristicOptions& options) {
  absl::StatusOr<PatternPartitions> partitions = ResolvePatternPartitions(goal, options.pdb_preset, options.pdb_groups);
  if (!partitions.ok()) return;
  PdbStore& store = PdbStore::ForDirectory(options.pdb_dir);
  for (const PatternGroups& groups : *partitions) {
    for (const std::vector<int>& tiles : groups) store.LoadInBackground({goal, tiles, options.pdb_zero_aware});
  }
}

absl::StatusOr<PatternDatabase> PatternDatabase::Create(const Puzzle& puzzle, const HeuristicOptions& options) {
  absl::StatusOr<PatternPartitions> partitions =
      ResolvePatternPartitions(puzzle.goal(), options.pdb_preset, options.pdb_groups);
  if (!partitions.ok()) return partitions.status();

  // Every distinct group's table, largest first: a build's scratch space is
  // the peak, and it is lowest with the fewest finished tables held beside
  // it (7-8: by the 7-tile table's 58 MB). Partitions that share a group
  // share its table.
  std::map<std::vector<int>, std::shared_ptr<const PatternTable>> tables;
  for (const PatternGroups& groups : *partitions) {
    for (const std::vector<int>& tiles : groups) tables[tiles];
  }
  std::vector<std::vector<int>> order;
  for (const auto& [tiles, table] : tables) order.push_back(tiles);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  const PdbBuildOptions build{options.pdb_build_threads, options.on_message, options.build_limits,
                              options.pdb_cache_bytes, options.pdb_held_only};
  PdbStore& store = PdbStore::ForDirectory(options.pdb_dir);
  for (const std::vector<int>& tiles : order) {
    absl::StatusOr<std::shared_ptr<const PatternTable>> table =
        store.Table({puzzle.goal(), tiles, options.pdb_zero_aware}, build);
    if (!table.ok()) return table.status();
    tables[tiles] = *std::move(table);
  }

  PatternDatabase db(puzzle);
  db.partitions_ = *partitions;
  // Transposing maps the goal to itself once tiles are renamed goal[c] ->
  // goal[transpose(c)], provided the blank keeps its cell.
  const int side = puzzle.rows();
  const int goal_blank = puzzle.GoalCell(0);
  db.mirrored_ = options.pdb_mirror && puzzle.rows() == puzzle.cols() && goal_blank / side == goal_blank % side;
  for (int c = 0; c < puzzle.cells(); ++c) {
    db.transpose_[c] = static_cast<uint8_t>(puzzle.Col(c) * puzzle.cols() + puzzle.Row(c));
  }
  // The table tile each board tile plays: itself, or its image on the
  // transposed board (which only a mirrored, so square, board has).
  std::array<uint8_t, kMaxCells> as_itself{}, as_image{};
  for (int c = 0; c < puzzle.cells(); ++c) {
    as_itself[puzzle.goal().at(c)] = static_cast<uint8_t>(puzzle.goal().at(c));
    if (db.mirrored_) as_image[puzzle.goal().at(c)] = static_cast<uint8_t>(puzzle.goal().at(db.transpose_[c]));
  }
  for (const PatternGroups& groups : *partitions) {
    for (const bool transposed : {false, true}) {
      if (transposed && !db.mirrored_) continue;
      const std::array<uint8_t, kMaxCells>& plays = transposed ? as_image : as_itself;
      View view{.transposed = transposed};
      view.group_of.fill(-1);
      for (size_t g = 0; g < groups.size(); ++g) {
        const std::vector<int>& tiles = groups[g];
        Group group{.indexer = PlacementIndexer(puzzle.cells(), static_cast<int>(tiles.size())),
                    .table = tables[tiles]};
        group.by_cells = group.table->by_cells();
        group.by_rank = group.table->data();
        group.extras = group.table->extras();
        group.free_cells = puzzle.cells() - static_cast<int>(tiles.size());
        group.tracked = group.by_cells != nullptr && g < PatternDatabase::kTrackedGroups;
        group.cell_weight.resize(tiles.size());
        for (uint32_t i = tiles.size(), weight = 1; i-- > 0; weight *= puzzle.cells()) group.cell_weight[i] = weight;
        for (size_t i = 0; i < tiles.size(); ++i) {
          for (int u = 1; u < puzzle.cells(); ++u) {
            if (plays[u] != tiles[i]) continue;
            group.tiles.push_back(static_cast<uint8_t>(u));
            view.group_of[u] = static_cast<int8_t>(g);
            view.cell_weight_of[u] = group.cell_weight[i];
          }
        }
        view.groups.push_back(std::move(group));
      }
      db.views_.push_back(std::move(view));
    }
  }
  return db;
}

}  // namespace npuzzle
