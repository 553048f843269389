// Pattern databases: exact on the 8-puzzle, admissible against exhaustive
// BFS, optimal on Korf's instances, and a cache that
// never trusts a damaged or foreign file.
#include <deque>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/board_parser.h"
#include "engine/goals.h"
#include "engine/heuristics/pattern_database.h"
#include "engine/instances.h"
#include "engine/pdb/cell_index.h"
#include "engine/pdb/pattern_builder.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/pdb/pdb_store.h"
#include "engine/pdb/placement.h"
#include "engine/puzzle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/exhaustive.h"
#include "tests/util/korf_instances.h"
#include "tests/util/process_util.h"
#include "tests/util/solve_util.h"

namespace npuzzle {
namespace {

using testing::ExhaustiveDistances;
using ::testing::HasSubstr;

// Tables shared by the test processes (built once, under the store's file
// lock), as a fleet of workers would share them.
HeuristicOptions SharedTables(const std::string& preset = "", const std::string& groups = "") {
  HeuristicOptions o;
  o.pdb_preset = preset;
  o.pdb_groups = groups;
  o.pdb_dir = NPUZZLE_TEST_PDB_DIR;
  return o;
}

TEST(PlacementIndexer, RankIsABijection) {
  for (auto [cells, tiles] : {std::pair{6, 3}, {9, 8}, {9, 1}, {10, 4}}) {
    const PlacementIndexer indexer(cells, tiles);
    std::set<uint64_t> seen;
    std::vector<uint8_t> placement(tiles);
    for (uint64_t r = 0; r < indexer.size(); ++r) {
      indexer.Unrank(r, placement.data());
      ASSERT_EQ(indexer.Rank(placement.data()), r);
      ASSERT_TRUE(seen.insert(r).second);
      ASSERT_EQ(std::set<uint8_t>(placement.begin(), placement.end()).size(), static_cast<size_t>(tiles));
    }
  }
  const PlacementIndexer big(25, 6);
  EXPECT_EQ(big.size(), 127512000u);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t r = rng() % big.size();
    uint8_t placement[6];
    big.Unrank(r, placement);
    EXPECT_EQ(big.Rank(placement), r);
  }
}

// Stepping a placement forward lands where unranking does, for steps that
// carry through every digit (tiles == cells: the last radix is 1).
TEST(PlacementIndexer, AdvanceMatchesUnrank) {
  std::mt19937_64 rng(6);
  for (auto [cells, tiles] : {std::pair{9, 9}, {16, 8}, {16, 7}, {25, 6}, {64, 4}, {4, 1}}) {
    const PlacementIndexer indexer(cells, tiles);
    uint8_t at[64], digit[64], want[64], want_digit[64];
    uint64_t rank = 0;
    indexer.Unrank(rank, at, digit);
    for (int step = 0; step < 20000; ++step) {
      const uint64_t delta = step % 7 == 0 ? rng() % 300 : rng() % 3;
      if (rank + delta >= indexer.size()) {
        rank = rng() % indexer.size();
        indexer.Unrank(rank, at, digit);
        continue;
      }
      indexer.Advance(delta, at, digit);
      rank += delta;
      indexer.Unrank(rank, want, want_digit);
      for (int i = 0; i < tiles; ++i) {
        ASSERT_EQ(at[i], want[i]) << cells << " cells, " << tiles << " tiles, rank " << rank << ", tile " << i;
        ASSERT_EQ(digit[i], want_digit[i]) << cells << " cells, " << tiles << " tiles, rank " << rank;
      }
    }
  }
}

// An independent truth for one table: 0-1 breadth-first search over every
// (placement, blank cell), where sliding a group tile costs one and any
// other tile nothing. By placement rank x cells + blank cell; UINT8_MAX
// where the blank would share a tile's cell.
std::vector<uint8_t> ZeroOneBfsDistances(const Board& goal, const std::vector<int>& group) {
  const int cells = goal.cells();
  const int k = static_cast<int>(group.size());
  const PlacementIndexer indexer(cells, k);
  std::vector<uint8_t> seen(indexer.size() * cells, UINT8_MAX);
  std::deque<std::pair<uint64_t, uint8_t>> open;
  auto state = [&](const std::vector<uint8_t>& at, int blank) { return indexer.Rank(at.data()) * cells + blank; };
  std::vector<uint8_t> home;
  for (int t : group) {
    home.push_back(static_cast<uint8_t>(std::find(goal.tiles().begin(), goal.tiles().end(), t) - goal.tiles().begin()));
  }
  open.push_back({state(home, goal.blank()), 0});
  std::vector<uint8_t> at(k);
  while (!open.empty()) {
    const auto [s, d] = open.front();
    open.pop_front();
    if (seen[s] <= d) continue;
    seen[s] = d;
    const int blank = static_cast<int>(s % cells);
    indexer.Unrank(s / cells, at.data());
    for (int dir = 0; dir < kNumDirs; ++dir) {
      const int to = NeighborCell(goal.rows(), goal.cols(), blank, static_cast<Dir>(dir));
      if (to < 0) continue;
      const auto tile = std::find(at.begin(), at.end(), to);
      if (tile == at.end()) {
        open.push_front({state(at, to), d});
      } else {
        std::vector<uint8_t> moved = at;
        moved[tile - at.begin()] = static_cast<uint8_t>(blank);
        open.push_back({state(moved, to), static_cast<uint8_t>(d + 1)});
      }
    }
  }
  return seen;
}

// A placement's distance is its least over blank cells.
std::vector<uint8_t> ZeroOneBfsTable(const Board& goal, const std::vector<int>& group) {
  const std::vector<uint8_t> seen = ZeroOneBfsDistances(goal, group);
  const uint64_t cells = goal.cells();
  std::vector<uint8_t> table(seen.size() / cells, UINT8_MAX);
  for (uint64_t s = 0; s < seen.size(); ++s) table[s / cells] = std::min(table[s / cells], seen[s]);
  return table;
}

void ExpectBuildMatchesZeroOneBfs(const Board& goal, const std::vector<int>& group, int distance_bits) {
  PatternBuildOptions options;
  options.threads = 2;
  options.distance_bits = distance_bits;
  absl::StatusOr<AnonymousMemory> built = BuildPatternDistances(goal, group, options);
  ASSERT_TRUE(built.ok()) << built.status();
  const std::vector<uint8_t> truth = ZeroOneBfsTable(goal, group);
  const uint8_t* table = built->as<uint8_t>();
  for (uint64_t rank = 0; rank < truth.size(); ++rank) {
    ASSERT_EQ(table[rank], truth[rank]) << goal.rows() << "x" << goal.cols() << " goal " << goal.ToString()
                                        << " placement " << rank << " built with " << distance_bits << "-bit entries";
  }
}

// Boards above 16 cells find the blank's region by flood fill (after a
// look at the cells around the move, which mostly shows that it cannot cut
// the free cells), smaller ones by table; narrow boards and corners make
// tiles cut the free cells into several regions, which is where a region
// mistake would show.
TEST(PatternBuilder, MatchesZeroOneBfsOnEveryKindOfBoard) {
  struct Case {
    int rows, cols;
    std::vector<int> group;
  };
  const std::vector<Case> cases = {{3, 3, {1, 2, 3}},    {4, 4, {1, 5, 6}},    {3, 7, {2, 3, 10}}, {3, 6, {1, 7, 8}},
                                   {4, 5, {1, 2, 3, 6}}, {5, 5, {1, 2, 5, 6}}, {6, 6, {7, 8}},     {8, 8, {1, 9}},
                                   {3, 8, {2, 10, 11}},  {7, 3, {4, 5, 8}}};
  // Entries of every width, so that builds widen at every depth from the
  // first (one bit holds only the goal's distance) to none.
  int bits = 0;
  for (const Case& c : cases) {
    for (const char* preset : {"standard", "blank-first", "snail"}) {
      ExpectBuildMatchesZeroOneBfs(*GoalPreset(preset, c.rows, c.cols), c.group, bits++ % 8 + 1);
    }
  }
}

// Every shape the engine accepts, with the blank-first goal's tiles on the
// cells beside and below its corner and the one diagonal from it: they shut
// the blank's home corner off from the rest, so the region checks meet a
// cut on every board.
TEST(PatternBuilder, MatchesZeroOneBfsOnEveryShape) {
  for (int rows = kMinSide; rows <= kMaxSide; ++rows) {
    for (int cols = kMinSide; cols <= kMaxSide; ++cols) {
      const Board goal = *GoalPreset("blank-first", rows, cols);
      ExpectBuildMatchesZeroOneBfs(goal, {goal.tiles()[1], goal.tiles()[cols], goal.tiles()[cols + 1]}, 8);
    }
  }
}

// A zero-aware table's value for every placement and every free blank cell
// is the 0-1 search's distance (up to the placement's least plus 6, where
// the extras saturate), in the dense layout and in the cell layout where
// one is made; on shapes and goals where tiles wall off corners and
// pockets, and on boards above 16 cells (regions by flood fill). Extras
// are even, as the table's format assumes.
TEST(PatternBuilder, ZeroAwareTablesMatchZeroOneBfsForEveryBlankCell) {
  struct Case {
    int rows, cols;
    std::vector<int> group;
  };
  const std::vector<Case> cases = {
      {3, 3, {1, 2, 3}}, {2, 2, {1}},    {4, 4, {1, 5, 6}},    {3, 7, {2, 3, 10}}, {4, 5, {1, 2, 3, 6}},
      {5, 5, {1, 6, 7}}, {8, 8, {1, 9}}, {3, 4, {2, 5, 6, 7}}, {7, 3, {4, 5, 8}},  {4, 4, {2, 3, 5, 6, 9}}};
  int more_than_least = 0, saturated = 0;
  for (const Case& c : cases) {
    for (const char* preset : {"standard", "blank-first", "snail"}) {
      const PatternKey key{*GoalPreset(preset, c.rows, c.cols), c.group, /*blank_aware=*/true};
      const int cells = key.goal.cells();
      const int k = static_cast<int>(c.group.size());
      PatternBuildOptions options;
      options.threads = 2;
      options.blank_aware = true;
      absl::StatusOr<AnonymousMemory> built = BuildPatternDistances(key.goal, key.group, options);
      ASSERT_TRUE(built.ok()) << built.status();
      const std::shared_ptr<PatternTable> table = PatternTable::FromMemory(*std::move(built), key);
      const std::vector<uint8_t> truth = ZeroOneBfsDistances(key.goal, key.group);
      const PlacementIndexer indexer(cells, k);
      std::vector<uint8_t> at(k);
      const auto check = [&](absl::string_view layout) {
        for (uint64_t rank = 0; rank < indexer.size(); ++rank) {
          indexer.Unrank(rank, at.data());
          int least = UINT8_MAX;
          for (int blank = 0; blank < cells; ++blank) least = std::min<int>(least, truth[rank * cells + blank]);
          ASSERT_EQ((*table)[rank], least) << key.Describe() << " placement " << rank << " " << layout;
          for (int blank = 0; blank < cells; ++blank) {
            if (std::find(at.begin(), at.end(), blank) != at.end()) continue;
            const int exact = truth[rank * cells + blank];
            ASSERT_EQ((exact - least) % 2, 0) << key.Describe() << " placement " << rank << " blank on " << blank;
            const int want = std::min(exact, least + 6);
            ASSERT_EQ(table->Value(rank, blank), want)
                << key.Describe() << " placement " << rank << " blank on " << blank << " " << layout;
            more_than_least += want > least;
            saturated += exact > least + 6;
          }
        }
      };
      check("by rank");
      table->AddCellIndex(key);
      if (table->by_cells() != nullptr) check("by cells");
    }
  }
  // The cases reach both kinds of entry the extras exist for.
  EXPECT_GT(more_than_least, 0);
  EXPECT_GT(saturated, 0);
}

// Widening takes memory beyond PatternBuildBytes, and the limit binds it.
TEST(PatternBuilder, WideningPastTheMemoryLimitIsRefused) {
  const Board goal = *GoalPreset("standard", 4, 4);
  PatternBuildOptions options;
  options.distance_bits = 2;
  options.max_memory_bytes = PatternBuildBytes(16, 4, false);
  absl::StatusOr<AnonymousMemory> built = BuildPatternDistances(goal, {1, 2, 3, 4}, options);
  EXPECT_EQ(built.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(built.status().message(), HasSubstr("outgrew 2 bits"));
  options.distance_bits = 7;
  EXPECT_TRUE(BuildPatternDistances(goal, {1, 2, 3, 4}, options).ok());
}

TEST(PatternGroups, PresetsFollowTheGoal) {
  const Board blank_first = *GoalPreset("blank-first", 4, 4);
  const Board standard = *GoalPreset("standard", 4, 4);
  EXPECT_EQ(FormatPatternPartitions(*ResolvePatternPartitions(blank_first, "7-8", "")),
            "1,2,3,4,5,6,7/8,9,10,11,12,13,14,15");
  EXPECT_EQ(FormatPatternPartitions(*ResolvePatternPartitions(standard, "7-8", "")),
            "1,2,3,4,5,6,7,8/9,10,11,12,13,14,15");
  EXPECT_EQ(FormatPatternPartitions(*ResolvePatternPartitions(blank_first, "6-6-3", "")),
            "1,2,3/4,5,8,9,12,13/6,7,10,11,14,15");
  EXPECT_EQ(FormatPatternPartitions(*ResolvePatternPartitions(blank_first, "5-5-5", "")),
            "1,2,3,6,7/4,5,8,9,12/10,11,13,14,15");
  EXPECT_EQ(FormatPatternPartitions(*ResolvePatternPartitions(*GoalPreset("blank-first", 5, 5), "6-6-6-6", "")),
            "1,2,5,6,7,12/3,4,8,9,13,14/10,11,15,16,20,21/17,18,19,22,23,24");
  EXPECT_EQ(FormatPatternPartitions(*ResolvePatternPartitions(*GoalPreset("standard", 3, 3), "", "")),
            "1,2,3,4,5,6,7,8");
  // Any board gets groups; an 8x8 one leaves the rest to Manhattan.
  const PatternPartitions big = *ResolvePatternPartitions(*GoalPreset("standard", 8, 8), "", "");
  ASSERT_EQ(big.size(), 1u);
  EXPECT_LE(big[0].size(), kMaxPatternGroups);
  // Several partitions, each resolved on its own.
  EXPECT_EQ(
      FormatPatternPartitions(*ResolvePatternPartitions(*GoalPreset("blank-first", 5, 5), "6-6-6-6+6-6-6-6b", "")),
      "1,2,5,6,7,12/3,4,8,9,13,14/10,11,15,16,20,21/17,18,19,22,23,24+"
      "1,2,5,6,10,11/3,4,7,8,9,12/13,14,18,19,23,24/15,16,17,20,21,22");
  EXPECT_EQ(FormatPatternPartitions(*ResolvePatternPartitions(blank_first, "", "1,2,3/4,5+1,4/2,3,5")),
            "1,2,3/4,5+1,4/2,3,5");
}

TEST(PatternGroups, ErrorsNameTheProblem) {
  const Board goal = *GoalPreset("standard", 4, 4);
  EXPECT_THAT(ResolvePatternPartitions(goal, "7-7", "").status().message(), HasSubstr("unknown pattern preset '7-7'"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "6-6-6-6", "").status().message(),
              HasSubstr("pattern preset 6-6-6-6 is for 5x5 boards, not 4x4"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "", "1,2,3/3,4").status().message(),
              HasSubstr("tile 3 is in pattern groups 1 and 2"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "", "1,2,16").status().message(),
              HasSubstr("names tile 16, which a 4x4 board does not have"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "", "1,2,x").status().message(), HasSubstr("'x' is not a tile number"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "", "1,2,3,4,5,6,7,8,9").status().message(),
              HasSubstr("its table would need more than"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "7-8", "1,2").status().message(), HasSubstr("not both"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "7-8+", "").status().message(),
              HasSubstr("pattern partition 2 of 2 is empty"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "7-8+6-6-3+5-5-5", "").status().message(),
              HasSubstr("3 pattern partitions; at most 2"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "", "1,2+1,2,2").status().message(),
              HasSubstr("pattern partition 2: tile 2 is in pattern groups 1 and 1"));
  EXPECT_THAT(ResolvePatternPartitions(goal, "6-6-3+6-6-6-6", "").status().message(),
              HasSubstr("pattern partition 2: pattern preset 6-6-6-6 is for 5x5 boards"));
}

// The heuristic's value of every reachable board against its true distance,
// and the incremental update against evaluation from scratch.
void CheckAgainstBfs(const Board& goal, const HeuristicOptions& options, bool exact) {
  const ExhaustiveDistances oracle(goal);
  const Puzzle puzzle(goal);
  absl::StatusOr<PatternDatabase> db = PatternDatabase::Create(puzzle, options);
  ASSERT_TRUE(db.ok()) << db.status();
  int checked = 0;
  oracle.ForEachBoard([&](const std::vector<int>& tiles, int distance) {
    if (distance < 0) return;
    const Tiles s = Puzzle::ToTiles(*Board::Create(goal.rows(), goal.cols(), tiles));
    const int h = PatternDatabase::Value(db->Start(s));
    if (exact) {
      ASSERT_EQ(h, distance);
    } else {
      ASSERT_LE(h, distance);
    }
    for (int d = 0; d < kNumDirs; ++d) {
      const int to = puzzle.Neighbor(s.blank(), static_cast<Dir>(d));
      if (to < 0) continue;
      Tiles child = s;
      child.MoveBlank(to);
      const int child_h = PatternDatabase::Value(db->Move(s, db->Start(s), s.at[to], to, s.blank()));
      ASSERT_EQ(child_h, PatternDatabase::Value(db->Start(child)));
    }
    ++checked;
  });
  EXPECT_EQ(checked, oracle.reachable());
}

TEST(PatternDatabase, EightPuzzleTableIsExact) {
  testing::TempDir dir;
  HeuristicOptions o;
  o.pdb_dir = dir.path();
  for (const char* goal : {"standard", "snail"}) CheckAgainstBfs(*GoalPreset(goal, 3, 3), o, /*exact=*/true);
}

TEST(PatternDatabase, AdmissibleOnSmallBoards) {
  testing::TempDir dir;
  struct Case {
    Board goal;
    const char* groups;
  };
  for (const Case& c :
       {Case{*GoalPreset("standard", 3, 3), "1,2,3,4/5,6,7,8"},
        Case{*GoalPreset("blank-first", 3, 3), "1,3,5,7/2,4,6,8"}, Case{*GoalPreset("snail", 3, 3), "1,2,3/4,5,6/7,8"},
        Case{*GoalPreset("standard", 2, 5), "1,2,3/4,5,6/7,8,9"},
        Case{*GoalPreset("snail", 2, 5), "1,2,3,4,5"},  // the rest by Manhattan
        Case{*GoalPreset("standard", 4, 2), "1,2,3,4/5,6,7"},
        Case{*GoalPreset("standard", 3, 3), "1,2,3,4/5,6,7,8+1,3,5,7/2,4,6,8"},
        Case{*GoalPreset("standard", 2, 5), "1,2,3/4,5,6/7,8,9+1,6,2,7/3,8,4,9"}}) {
    for (bool mirror : {true, false}) {
      for (bool zero_aware : {false, true}) {
        HeuristicOptions o;
        o.pdb_dir = dir.path();
        o.pdb_groups = c.groups;
        o.pdb_mirror = mirror;
        o.pdb_zero_aware = zero_aware;
        CheckAgainstBfs(c.goal, o, /*exact=*/false);
      }
    }
  }
}

// Along long random walks, with three groups and with the most a node
// holds (kMaxPatternGroups: every byte of its value words in use).
TEST(PatternDatabase, IncrementalUpdatesMatchFromScratch) {
  std::mt19937_64 rng(3);
  const HeuristicOptions three = SharedTables("5-5-5");
  const HeuristicOptions most = SharedTables("", "1,2/3,4/5,6/7,8/9,10/11,12/13,14/15");
  // Zero-aware: by rank with extras (five tiles on 4x4 get no cell
  // layout), and by cells in 64-bit entries (two tiles).
  const auto zero_aware = [](HeuristicOptions o) {
    o.pdb_zero_aware = true;
    return o;
  };
  const HeuristicOptions three_zero_aware = zero_aware(three), most_zero_aware = zero_aware(most);
  for (const char* goal_name : {"blank-first", "standard", "snail"}) {
    for (const HeuristicOptions* options : {&three, &most, &three_zero_aware, &most_zero_aware}) {
      const Board goal = *GoalPreset(goal_name, 4, 4);
      const Puzzle puzzle(goal);
      absl::StatusOr<PatternDatabase> db = PatternDatabase::Create(puzzle, *options);
      ASSERT_TRUE(db.ok()) << db.status();
      if (options->pdb_preset == "5-5-5") {
        EXPECT_EQ(db->mirrored(), std::string(goal_name) != "snail");
      } else {
        EXPECT_EQ(db->partitions()[0].size(), kMaxPatternGroups);
      }
      Tiles s = Puzzle::ToTiles(RandomSolvableBoard(goal, rng));
      PatternDatabase::Node node = db->Start(s);
      for (int step = 0; step < 20000; ++step) {
        int to;
        do to = puzzle.Neighbor(s.blank(), static_cast<Dir>(rng() % kNumDirs));
        while (to < 0);
        node = db->Move(s, node, s.at[to], to, s.blank());
        s.MoveBlank(to);
        const PatternDatabase::Node fresh = db->Start(s);
        ASSERT_EQ(node.value, fresh.value) << step;
        ASSERT_EQ(node.sum, fresh.sum) << step;
      }
    }
  }
}

TEST(PatternDatabase, NeverAboveKorfsOptimalLengths) {
  const Board goal = *GoalPreset("blank-first", 4, 4);
  const Puzzle puzzle(goal);
  for (const char* preset : {"5-5-5", "6-6-3"}) {
    const PatternDatabase db = *PatternDatabase::Create(puzzle, SharedTables(preset));
    for (const KorfInstance& k : LoadKorfInstances("korf100.txt", 4)) {
      EXPECT_LE(PatternDatabase::Value(db.Start(Puzzle::ToTiles(k.start))), k.optimal_length) << k.id;
    }
  }
}

// Fifteen of Korf's instances, solved optimally with 6-6-3 (the quick
// ones; all 100 are in bench/pdb_bench), on one thread or two, most with
// move pruning from the first pass, the rest with the quick machine from
// early on and the full-length one from whichever pass comes after its
// build (on its own thread) is done.
// With zero-aware tables too, and with the larger of two partitions' sums,
// each of which must search fewer nodes in all: their values are never
// below the plain 6-6-3 tables' (checked below on 5x5, and for two
// partitions in TwoPartitionsTakeTheLargerSum).
TEST(PatternDatabase, SolvesKorfInstancesOptimally) {
  const Board goal = *GoalPreset("blank-first", 4, 4);
  const std::vector<KorfInstance> korf = LoadKorfInstances("korf100.txt", 4);
  struct Tables {
    const char* preset;
    bool zero_aware;
  };
  const std::vector<Tables> tables = {{"6-6-3", false}, {"6-6-3", true}, {"6-6-3+5-5-5", false}};
  std::vector<uint64_t> generated(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    int solved = 0;
    for (int id : {2, 5, 6, 8, 9, 12, 16, 22, 24, 26, 27, 29, 31, 34, 35}) {
      const KorfInstance& k = korf[id - 1];
      SolveRequest request{k.start, goal, "idastar", "pdb"};
      request.heuristic_options = SharedTables(tables[i].preset);
      request.heuristic_options.pdb_zero_aware = tables[i].zero_aware;
      request.options.threads = id % 2 == 0 ? 2 : 1;
      request.options.pruning_after_generated = id % 3 != 0 ? 0 : 20000;
      absl::StatusOr<SolveResult> r = Solve(request);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->status, SearchStatus::kSolved) << k.id;
      EXPECT_TRUE(r->optimal);
      EXPECT_EQ(static_cast<int>(r->moves.size()), k.optimal_length) << "instance " << k.id;
      EXPECT_EQ(*ApplyMoves(k.start, r->moves), goal);
      generated[i] += r->stats.generated;
      ++solved;
    }
    EXPECT_EQ(solved, 15);
  }
  EXPECT_LT(generated[1], generated[0]);
  EXPECT_LT(generated[2], generated[0]);
}

// Two partitions' database gives each board the larger of the two single
// partitions' values, and its walks match evaluation from scratch.
TEST(PatternDatabase, TwoPartitionsTakeTheLargerSum) {
  std::mt19937_64 rng(5);
  for (const char* goal_name : {"blank-first", "snail"}) {  // mirrored, and not
    const Board goal = *GoalPreset(goal_name, 4, 4);
    const Puzzle puzzle(goal);
    const PatternDatabase first = *PatternDatabase::Create(puzzle, SharedTables("6-6-3"));
    const PatternDatabase second = *PatternDatabase::Create(puzzle, SharedTables("5-5-5"));
    const PatternDatabase both = *PatternDatabase::Create(puzzle, SharedTables("6-6-3+5-5-5"));
    ASSERT_EQ(both.partitions().size(), 2u);
    int second_larger = 0;
    for (int board = 0; board < 20; ++board) {
      Tiles s = Puzzle::ToTiles(RandomSolvableBoard(goal, rng));
      PatternDatabase::Node node = both.Start(s);
      for (int step = 0; step < 500; ++step) {
        const int a = PatternDatabase::Value(first.Start(s)), b = PatternDatabase::Value(second.Start(s));
        ASSERT_EQ(PatternDatabase::Value(node), std::max(a, b)) << goal_name << " board " << board << " step " << step;
        second_larger += b > a;
        const PatternDatabase::Node fresh = both.Start(s);
        ASSERT_EQ(node.value, fresh.value);
        ASSERT_EQ(node.sum, fresh.sum);
        int to;
        do to = puzzle.Neighbor(s.blank(), static_cast<Dir>(rng() % kNumDirs));
        while (to < 0);
        node = both.Move(s, node, s.at[to], to, s.blank());
        s.MoveBlank(to);
      }
    }
    EXPECT_GT(second_larger, 0) << goal_name;  // the second partition is looked at
  }
}

// --- the cell layout (engine/pdb/cell_index.h) ---

TEST(CellIndex, OnlyWhereItAtMostDoublesTheTable) {
  EXPECT_EQ(CellIndexEntries(25, 6), 244140625u);  // the 24-puzzle's 6-6-6-6
  EXPECT_EQ(CellIndexEntries(16, 4), 65536u);
  EXPECT_EQ(CellIndexEntries(16, 5), 0u);  // 1,048,576 against 2 x 524,160
  EXPECT_EQ(CellIndexEntries(16, 8), 0u);  // also past 32-bit indices
  EXPECT_EQ(CellIndexEntries(9, 8), 0u);
  EXPECT_EQ(CellIndexEntries(64, 1), 64u);
}

// Every placement's entry in the cell layout against the dense table's,
// on boards and groups of every size the layout is made for.
TEST(CellIndex, EveryPlacementMatchesTheDenseTable) {
  struct Case {
    int rows, cols;
    std::vector<int> group;
  };
  for (const Case& c :
       {Case{3, 3, {1, 2, 3}}, Case{2, 2, {1, 2}}, Case{4, 4, {1, 2, 5, 6}}, Case{5, 5, {1, 2, 3, 4, 5}},
        Case{6, 6, {7, 8, 13, 14}}, Case{8, 8, {9, 10, 11}}, Case{3, 7, {1}}}) {
    const PatternKey key{*GoalPreset("blank-first", c.rows, c.cols), c.group};
    const int cells = c.rows * c.cols;
    const int k = static_cast<int>(c.group.size());
    PatternBuildOptions options;
    options.threads = 2;
    absl::StatusOr<AnonymousMemory> built = BuildPatternDistances(key.goal, key.group, options);
    ASSERT_TRUE(built.ok()) << built.status();
    const std::shared_ptr<PatternTable> table = PatternTable::FromMemory(*std::move(built), key);
    ASSERT_EQ(table->by_cells(), nullptr) << key.Describe() << ": made before it was asked for";
    const std::vector<uint8_t> dense(table->data(), table->data() + table->size());
    table->AddCellIndex(key);
    ASSERT_NE(table->by_cells(), nullptr) << key.Describe();
    EXPECT_EQ(table->data(), nullptr) << key.Describe() << ": the dense layout is kept beside the cell layout";
    const PlacementIndexer indexer(cells, k);
    std::vector<uint8_t> at(k);
    for (uint64_t rank = 0; rank < indexer.size(); ++rank) {
      indexer.Unrank(rank, at.data());
      uint64_t index = 0;
      for (int i = 0; i < k; ++i) index = index * cells + at[i];
      ASSERT_EQ(table->by_cells()[index], dense[rank]) << key.Describe() << " placement " << rank;
      ASSERT_EQ((*table)[rank], dense[rank]) << key.Describe() << " placement " << rank;
    }
  }
}

// Whichever way a store comes by a table (built for memory only, built,
// saved and read back, or loaded by a second store), the table it hands
// out is laid out by cells, without the dense copy beside it.
TEST(CellIndex, EveryTableAStoreHandsOutHasIt) {
  testing::TempDir dir;
  const PatternKey key{*GoalPreset("blank-first", 4, 4), {1, 2, 5, 6}};  // 65,536 entries by cells, 43,680 dense
  PdbStore in_memory("");
  PdbStore building(dir.path());
  PdbStore loading(dir.path());
  for (PdbStore* store : {&in_memory, &building, &loading}) {
    absl::StatusOr<std::shared_ptr<const PatternTable>> table = store->Table(key, PdbBuildOptions{});
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_NE((*table)->by_cells(), nullptr);
    EXPECT_EQ((*table)->data(), nullptr);
    EXPECT_EQ((*table)->from_file(), store != &in_memory);
    EXPECT_THAT((*table)->Save(dir.path() + "/copy.bin", key).message(), HasSubstr("laid out by cells"));
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/copy.bin"));
  }
  EXPECT_EQ(in_memory.built() + building.built() + loading.built(), 2);
}

// A database over cell layouts gives, for random boards and along walks
// from them, the sums of the tables' entries found here by placement rank
// (EveryPlacementMatchesTheDenseTable checks those against the dense
// tables).
// Zero-aware tables the same way, and their sums never below the plain ones.
void ExpectDatabaseLookupsMatchTheTablesByRank(bool zero_aware) {
  std::mt19937_64 rng(11);
  const Board goal = *GoalPreset("blank-first", 5, 5);
  const Puzzle puzzle(goal);
  HeuristicOptions options = SharedTables("", "1,2,5,6/3,4,8,9/7,12,13,14/10,11,15,16/20,21,22/17,18,19,23,24");
  options.pdb_zero_aware = zero_aware;
  absl::StatusOr<PatternDatabase> db = PatternDatabase::Create(puzzle, options);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(db->mirrored());
  PdbStore& store = PdbStore::ForDirectory(options.pdb_dir);
  std::vector<std::shared_ptr<const PatternTable>> tables;
  for (const std::vector<int>& group : db->partitions()[0]) {
    tables.push_back(*store.Table({goal, group, zero_aware}, PdbBuildOptions{}));
    ASSERT_NE(tables.back()->by_cells(), nullptr);
  }
  HeuristicOptions plain_options = options;
  plain_options.pdb_zero_aware = false;
  const PatternDatabase plain = *PatternDatabase::Create(puzzle, plain_options);
  int above_plain = 0;
  const auto dense_sum = [&](const Tiles& s) {
    int sum = 0;
    for (size_t g = 0; g < tables.size(); ++g) {
      const std::vector<int>& group = db->partitions()[0][g];
      std::vector<uint8_t> at;
      for (int t : group) at.push_back(s.pos[t]);
      sum += tables[g]->Value(PlacementIndexer(25, static_cast<int>(group.size())).Rank(at.data()), s.blank());
    }
    const int plain_sum = plain.Start(s).sum[0];
    EXPECT_GE(sum, plain_sum);
    above_plain += sum > plain_sum;
    return sum;
  };
  for (int board = 0; board < 50; ++board) {
    Tiles s = Puzzle::ToTiles(RandomSolvableBoard(goal, rng));
    PatternDatabase::Node node = db->Start(s);
    for (int step = 0; step < 200; ++step) {
      ASSERT_EQ(node.sum[0], dense_sum(s)) << "board " << board << " step " << step;
      // The mirror's sum too, and both against a node made from scratch
      // (its cell indices found from the tiles, where a walk's are carried
      // from move to move).
      const PatternDatabase::Node fresh = db->Start(s);
      ASSERT_EQ(node.sum, fresh.sum) << "board " << board << " step " << step;
      ASSERT_EQ(node.value, fresh.value) << "board " << board << " step " << step;
      int to;
      do to = puzzle.Neighbor(s.blank(), static_cast<Dir>(rng() % kNumDirs));
      while (to < 0);
      node = db->Move(s, node, s.at[to], to, s.blank());
      s.MoveBlank(to);
    }
  }
  if (zero_aware) {
    EXPECT_GT(above_plain, 0);
  }
}

TEST(CellIndex, DatabaseLookupsMatchTheTablesByRank) { ExpectDatabaseLookupsMatchTheTablesByRank(false); }

TEST(CellIndex, ZeroAwareDatabaseLookupsMatchTheTablesByRank) { ExpectDatabaseLookupsMatchTheTablesByRank(true); }

// --- the on-disk cache ---

class PdbCacheTest : public ::testing::Test {
 protected:
  // A fresh store (no tables in memory) over the test's directory; the
  // messages it prints are collected.
  std::shared_ptr<const PatternTable> Get(const PatternKey& key) {
    PdbStore store(dir_.path());
    PdbBuildOptions options;
    options.on_message = [this](absl::string_view m) { messages_ += std::string(m) + "\n"; };
    absl::StatusOr<std::shared_ptr<const PatternTable>> table = store.Table(key, options);
    EXPECT_TRUE(table.ok()) << table.status();
    built_ = store.built();
    return *table;
  }
  std::string Path(const PatternKey& key) const { return dir_.path() + "/" + key.FileName(); }

  testing::TempDir dir_;
  std::string messages_;
  int built_ = 0;
  const PatternKey key_{*GoalPreset("standard", 3, 3), {1, 2, 3, 4, 5}};
};

TEST_F(PdbCacheTest, BuildsOnceThenLoads) {
  const auto first = Get(key_);
  EXPECT_EQ(built_, 1);
  EXPECT_TRUE(std::filesystem::exists(Path(key_)));
  const auto second = Get(key_);
  EXPECT_EQ(built_, 0);
  EXPECT_TRUE(second->from_file());
  ASSERT_EQ(first->size(), second->size());
  EXPECT_EQ(std::memcmp(first->data(), second->data(), first->size()), 0);
}

// A table in use does not depend on its file: truncating or overwriting
// the file cannot fault the process (a mapping would SIGBUS here).
// Asks `store` for the table held-only until it has it, for up to 20 s.
absl::StatusOr<std::shared_ptr<const PatternTable>> AwaitHeld(PdbStore& store, const PatternKey& key) {
  PdbBuildOptions held_only;
  held_only.held_only = true;
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  for (;;) {
    absl::StatusOr<std::shared_ptr<const PatternTable>> table = store.Table(key, held_only);
    if (table.ok() || absl::Now() > give_up) return table;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

// Held-only asks never touch the directory; a background load makes a
// built table held, the same bytes as its file, and never builds one.
TEST_F(PdbCacheTest, HeldOnlyAsksNeitherLoadNorBuildAndABackgroundLoadMakesATableHeld) {
  PdbStore& store = PdbStore::ForDirectory(dir_.path());
  PdbBuildOptions held_only;
  held_only.held_only = true;
  EXPECT_TRUE(absl::IsNotFound(store.Table(key_, held_only).status()));
  store.LoadInBackground(key_);  // not built: nothing to load
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_TRUE(absl::IsNotFound(store.Table(key_, held_only).status()));
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path()));

  const auto built = Get(key_);  // by another store, as by another process
  EXPECT_TRUE(absl::IsNotFound(store.Table(key_, held_only).status()));
  store.LoadInBackground(key_);
  store.LoadInBackground(key_);  // once is enough; a second is a no-op
  absl::StatusOr<std::shared_ptr<const PatternTable>> held = AwaitHeld(store, key_);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE((*held)->from_file());
  ASSERT_EQ((*held)->size(), built->size());
  EXPECT_EQ(std::memcmp((*held)->data(), built->data(), built->size()), 0);
  EXPECT_EQ(store.built(), 0);
}

TEST_F(PdbCacheTest, ABackgroundLoadNeverHoldsADamagedTable) {
  Get(key_);
  std::filesystem::resize_file(Path(key_), std::filesystem::file_size(Path(key_)) - 100);
  PdbStore& store = PdbStore::ForDirectory(dir_.path());
  store.LoadInBackground(key_);
  absl::SleepFor(absl::Milliseconds(500));
  PdbBuildOptions held_only;
  held_only.held_only = true;
  EXPECT_TRUE(absl::IsNotFound(store.Table(key_, held_only).status()));
  // Asked for outright, it is rebuilt as before.
  absl::StatusOr<std::shared_ptr<const PatternTable>> rebuilt = store.Table(key_, {});
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_EQ(store.built(), 1);
}

TEST_F(PdbCacheTest, ATableInUseSurvivesItsFileBeingTruncatedOrRewritten) {
  Get(key_);
  const auto in_use = Get(key_);
  ASSERT_TRUE(in_use->from_file());
  const std::vector<uint8_t> before(in_use->data(), in_use->data() + in_use->size());
  std::filesystem::resize_file(Path(key_), 0);
  uint64_t sum = 0;
  for (uint64_t i = 0; i < in_use->size(); ++i) sum += (*in_use)[i];
  EXPECT_GT(sum, 0u);
  std::ofstream(Path(key_), std::ios::trunc) << std::string(in_use->size(), 'x');
  EXPECT_EQ(std::vector<uint8_t>(in_use->data(), in_use->data() + in_use->size()), before);
}

TEST_F(PdbCacheTest, TruncatedFileIsDetectedAndRebuilt) {
  const auto mapped = Get(key_);
  const std::vector<uint8_t> good(mapped->data(), mapped->data() + mapped->size());
  std::filesystem::resize_file(Path(key_), std::filesystem::file_size(Path(key_)) - 100);
  EXPECT_THAT(PatternTable::Load(Path(key_), key_).status().message(), HasSubstr("expected"));
  const auto rebuilt = Get(key_);
  EXPECT_EQ(built_, 1);
  EXPECT_THAT(messages_, HasSubstr("rebuilding"));
  ASSERT_EQ(rebuilt->size(), good.size());
  EXPECT_EQ(std::memcmp(good.data(), rebuilt->data(), good.size()), 0);
  EXPECT_TRUE(PatternTable::Load(Path(key_), key_).ok());
}

TEST_F(PdbCacheTest, CorruptedDataIsDetectedAndRebuilt) {
  Get(key_);
  {
    std::fstream f(Path(key_), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096 + 1000);
    f.put('\x7f');
  }
  EXPECT_THAT(PatternTable::Load(Path(key_), key_).status().message(), HasSubstr("data checksum mismatch"));
  Get(key_);
  EXPECT_EQ(built_, 1);
  EXPECT_TRUE(PatternTable::Load(Path(key_), key_).ok());
}

TEST_F(PdbCacheTest, TableForAnotherGoalIsNeverUsed) {
  const PatternKey other{*GoalPreset("snail", 3, 3), {1, 2, 3, 4, 5}};
  Get(other);
  // Put the snail goal's table where the standard goal's belongs.
  std::filesystem::copy_file(Path(other), Path(key_));
  EXPECT_THAT(PatternTable::Load(Path(key_), key_).status().message(), HasSubstr("made for another"));
  messages_.clear();
  Get(key_);
  EXPECT_EQ(built_, 1);
  EXPECT_THAT(messages_, HasSubstr("made for another board, goal or group"));
  EXPECT_TRUE(PatternTable::Load(Path(key_), key_).ok());
}

// A plain table's file where a zero-aware one belongs is refused, and a
// zero-aware table saved and read back is the same table.
TEST_F(PdbCacheTest, PlainTableIsNeverUsedAsZeroAware) {
  const PatternKey zero_aware{key_.goal, key_.group, /*blank_aware=*/true};
  EXPECT_NE(zero_aware.FileName(), key_.FileName());
  Get(key_);
  std::filesystem::copy_file(Path(key_), Path(zero_aware));
  EXPECT_THAT(PatternTable::Load(Path(zero_aware), zero_aware).status().message(), HasSubstr("made for another"));
  const auto built = Get(zero_aware);
  EXPECT_EQ(built_, 1);
  const auto loaded = Get(zero_aware);
  EXPECT_EQ(built_, 0);
  ASSERT_TRUE(loaded->from_file());
  EXPECT_EQ(std::filesystem::file_size(Path(zero_aware)), PatternTable::FileBytes(zero_aware));
  const PlacementIndexer indexer(9, 5);
  for (uint64_t rank = 0; rank < indexer.size(); ++rank) {
    for (int blank = 0; blank < 9; ++blank) ASSERT_EQ(built->Value(rank, blank), loaded->Value(rank, blank));
  }
}

TEST_F(PdbCacheTest, DamagedHeaderIsDetected) {
  Get(key_);
  {
    std::fstream f(Path(key_), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    f.put('\x09');  // the format version
  }
  EXPECT_THAT(PatternTable::Load(Path(key_), key_).status().message(), HasSubstr("format version"));
  std::ofstream(Path(key_), std::ios::trunc) << "not a table";
  EXPECT_THAT(PatternTable::Load(Path(key_), key_).status().message(), HasSubstr("shorter than its header"));
}

}  // namespace
}  // namespace npuzzle
