// The move-pruning machine must never cut every shortest path: searched
// breadth-first through the machine, every board must still be reached at
// its true distance. Checked against the exhaustive oracle on every shape
// small enough, and against breadth-first search without the machine, to a
// depth beyond the machine's sequences, on all 49 shapes.
#include "engine/move_pruning.h"

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "engine/board.h"
#include "gtest/gtest.h"
#include "tests/util/exhaustive.h"
#include "tests/util/solve_util.h"

namespace npuzzle {
namespace {

using Cells = std::string;  // one char per cell: the tile on it

struct Node {
  Cells cells;
  int blank;
  int machine;
};

Cells CellsOf(const Board& board) {
  Cells cells;
  for (int tile : board.tiles()) cells.push_back(static_cast<char>(tile));
  return cells;
}

// The blank's move `d` on a rows x cols board with plain swaps, sharing no
// code with the engine; false off the board.
bool Slide(int rows, int cols, Node& n, int d) {
  const int r = n.blank / cols + (d == 0 ? -1 : d == 1 ? 1 : 0);
  const int c = n.blank % cols + (d == 2 ? -1 : d == 3 ? 1 : 0);
  if (r < 0 || r >= rows || c < 0 || c >= cols) return false;
  const int to = r * cols + c;
  std::swap(n.cells[n.blank], n.cells[to]);
  n.blank = to;
  return true;
}

// Breadth-first from `start` to `depth` moves, following only the moves
// `machine` allows (with none, every move): each board's distance. A board
// may be reached in several machine states at its distance, and each is
// searched on, since the states allow different continuations.
absl::flat_hash_map<Cells, int> Distances(const Board& start, const MovePruning* machine, int depth) {
  absl::flat_hash_map<Cells, int> distance;
  const Node root{CellsOf(start), start.blank(), MovePruning::kStart};
  distance[root.cells] = 0;
  std::vector<Node> level = {root};
  for (int g = 1; g <= depth && !level.empty(); ++g) {
    std::vector<Node> next;
    absl::flat_hash_set<std::pair<Cells, int>> queued;
    for (const Node& n : level) {
      for (int d = 0; d < kNumDirs; ++d) {
        Node child = n;
        if (!Slide(start.rows(), start.cols(), child, d)) continue;
        if (machine != nullptr) {
          child.machine = machine->Next(n.machine, static_cast<Dir>(d));
          if (child.machine == MovePruning::kPruned) continue;
        }
        auto [it, first] = distance.try_emplace(child.cells, g);
        if (it->second != g) continue;  // reached sooner: not on a shortest path
        if (queued.insert({child.cells, child.machine}).second) next.push_back(std::move(child));
      }
    }
    level = std::move(next);
  }
  return distance;
}

std::string MovesText(const std::vector<int>& moves) {
  std::string text;
  for (int d : moves) text.push_back("UDLR"[d]);
  return text;
}

TEST(MovePruning, LengthTwoPrunesExactlyTheMovesThatUndoTheLast) {
  const MovePruning machine = *MovePruning::Build(4, 4, 2);
  EXPECT_EQ(machine.pruned_sequences(), 4);
  // Every sequence of up to 6 moves.
  for (int length = 1; length <= 6; ++length) {
    for (int code = 0; code < (1 << (2 * length)); ++code) {
      std::vector<int> moves;
      for (int i = 0; i < length; ++i) moves.push_back((code >> (2 * i)) & 3);
      bool undoes = false;
      for (int i = 1; i < length; ++i) undoes |= (moves[i] ^ 1) == moves[i - 1];
      int state = MovePruning::kStart;
      for (int d : moves) {
        if (state != MovePruning::kPruned) state = machine.Next(state, static_cast<Dir>(d));
      }
      EXPECT_EQ(state == MovePruning::kPruned, undoes) << MovesText(moves);
    }
  }
}

TEST(MovePruning, ABuildStopsWhenAsked) {
  int asked = 0;
  EXPECT_FALSE(MovePruning::Build(8, 8, MovePruning::kMaxLength, [&] { return ++asked == 3; }));
  EXPECT_EQ(asked, 3);
  // A stopped build is not kept: the next one without a stop completes.
  EXPECT_EQ(MovePruning::For(7, 8, 9, [] { return true; }), nullptr);
  const MovePruning* built = MovePruning::For(7, 8, 9);
  ASSERT_NE(built, nullptr);
  EXPECT_GT(built->states(), 5);
  EXPECT_EQ(MovePruning::For(7, 8, 9, [] { return true; }), built);
}

TEST(MovePruning, PrunesMoreThanUndoingMoves) {
  // The legal sequences of 16 moves from every cell of a 4x4 board that
  // the machine lets through, against those that never undo a move.
  const MovePruning& machine = *MovePruning::For(4, 4, MovePruning::kMaxLength);
  const MovePruning undo_only = *MovePruning::Build(4, 4, 2);
  auto count = [](const MovePruning& m) {
    uint64_t sequences = 0;
    for (int cell = 0; cell < 16; ++cell) {
      Node root{Cells(16, 0), cell, MovePruning::kStart};
      std::vector<Node> level = {root};
      for (int length = 1; length <= 16; ++length) {
        std::vector<Node> next;
        for (const Node& n : level) {
          for (int d = 0; d < kNumDirs; ++d) {
            Node child = n;
            if (!Slide(4, 4, child, d)) continue;
            child.machine = m.Next(n.machine, static_cast<Dir>(d));
            if (child.machine != MovePruning::kPruned) next.push_back(std::move(child));
          }
        }
        level = std::move(next);
      }
      sequences += level.size();
    }
    return sequences;
  };
  const uint64_t pruned = count(machine), plain = count(undo_only);
  EXPECT_LT(pruned, 0.7 * plain) << pruned << " of " << plain;
}

TEST(MovePruning, EveryBoardKeepsItsExhaustiveDistance) {
  const std::vector<std::pair<int, int>> shapes = {{2, 2}, {2, 3}, {3, 2}, {2, 4}, {4, 2}, {3, 3}};
  std::mt19937_64 rng(11);
  for (auto [rows, cols] : shapes) {
    for (int length : {4, 6, 8, MovePruning::kMaxLength}) {
      SCOPED_TRACE(absl::StrCat(rows, "x", cols, ", sequences up to ", length));
      const MovePruning machine = *MovePruning::Build(rows, cols, length);
      const Board start = testing::RandomArrangement(rows, cols, rng);
      const testing::ExhaustiveDistances oracle(start);
      const absl::flat_hash_map<Cells, int> pruned = Distances(start, &machine, 1000);
      EXPECT_EQ(static_cast<int>(pruned.size()), oracle.reachable());
      for (const auto& [cells, distance] : pruned) {
        const std::vector<int> tiles(cells.begin(), cells.end());
        ASSERT_EQ(distance, oracle.Distance(tiles)) << Board::Create(rows, cols, tiles)->ToString();
      }
    }
  }
}

// Breadth-first with and without `machine` to `depth` moves from a random
// arrangement: every board is reached at the same distance.
void ExpectEveryDistanceKept(int rows, int cols, const MovePruning& machine, int depth, std::mt19937_64& rng) {
  const Board start = testing::RandomArrangement(rows, cols, rng);
  const absl::flat_hash_map<Cells, int> pruned = Distances(start, &machine, depth);
  const absl::flat_hash_map<Cells, int> plain = Distances(start, nullptr, depth);
  ASSERT_EQ(pruned.size(), plain.size());
  for (const auto& [cells, distance] : plain) {
    auto it = pruned.find(cells);
    ASSERT_TRUE(it != pruned.end()) << "a board " << distance << " moves away is never reached";
    ASSERT_EQ(it->second, distance);
  }
}

// The quick length on every shape; the full length, whose breadth-first
// check to two moves past it takes about eight seconds a shape, on the
// 15- and 24-puzzles' boards.
TEST(MovePruning, EveryShapeKeepsEveryDistanceBeyondTheMachinesSequences) {
  std::mt19937_64 rng(12);
  for (int rows = kMinSide; rows <= kMaxSide; ++rows) {
    for (int cols = kMinSide; cols <= kMaxSide; ++cols) {
      SCOPED_TRACE(absl::StrCat(rows, "x", cols));
      const MovePruning& machine = *MovePruning::For(rows, cols, MovePruning::kQuickLength);
      ExpectEveryDistanceKept(rows, cols, machine, MovePruning::kQuickLength + 2, rng);
    }
  }
  for (auto [rows, cols] : {std::pair{4, 4}, std::pair{5, 5}}) {
    SCOPED_TRACE(absl::StrCat(rows, "x", cols, " at ", MovePruning::kMaxLength, " moves"));
    const MovePruning& machine = *MovePruning::For(rows, cols, MovePruning::kMaxLength);
    ExpectEveryDistanceKept(rows, cols, machine, machine.length() + 2, rng);
  }
}

// A longer machine rejects whatever a shorter one does, and more: the
// shorter one's sequences are among its own.
TEST(MovePruning, ALongerMachineRejectsEverythingAShorterOneDoes) {
  std::mt19937_64 rng(13);
  for (auto [rows, cols] : {std::pair{3, 3}, std::pair{4, 4}, std::pair{5, 5}, std::pair{2, 7}}) {
    SCOPED_TRACE(absl::StrCat(rows, "x", cols));
    const MovePruning& shorter = *MovePruning::For(rows, cols, MovePruning::kQuickLength);
    const MovePruning& longer = *MovePruning::For(rows, cols, MovePruning::kMaxLength);
    EXPECT_EQ(longer.length(), MovePruning::kMaxLength);
    EXPECT_GE(longer.pruned_sequences(), shorter.pruned_sequences());
    // Random walks that the shorter machine allows, checking every move
    // on the way with both.
    int only_longer = 0;
    for (int walk = 0; walk < 500; ++walk) {
      Node n{Cells(rows * cols, 0), static_cast<int>(rng() % (rows * cols)), MovePruning::kStart};
      int short_state = MovePruning::kStart;
      for (int step = 0; step < 60 && n.machine != MovePruning::kPruned; ++step) {
        std::vector<int> allowed;
        for (int d = 0; d < kNumDirs; ++d) {
          const bool short_prunes = shorter.Next(short_state, static_cast<Dir>(d)) == MovePruning::kPruned;
          const bool long_prunes = longer.Next(n.machine, static_cast<Dir>(d)) == MovePruning::kPruned;
          ASSERT_TRUE(!short_prunes || long_prunes);
          Node child = n;
          if (!short_prunes && Slide(rows, cols, child, d)) allowed.push_back(d);
        }
        if (allowed.empty()) break;
        const int d = allowed[rng() % allowed.size()];
        Slide(rows, cols, n, d);
        short_state = shorter.Next(short_state, static_cast<Dir>(d));
        n.machine = longer.Next(n.machine, static_cast<Dir>(d));
        only_longer += n.machine == MovePruning::kPruned;
      }
    }
    if (rows * cols >= 16) {
      EXPECT_GT(only_longer, 0);
    }
  }
}

// A build that would take more than its budget stops at the last length
// that fits, and the machine of that length is what it gives; the real
// budget leaves 5x5 its 14 moves (checked above) and cuts 8x8's.
TEST(MovePruning, ABuildPastItsMemoryBudgetGivesTheLongestThatFits) {
  const MovePruning cut = *MovePruning::Build(4, 4, MovePruning::kMaxLength, nullptr, 8 << 20);
  EXPECT_LT(cut.length(), MovePruning::kMaxLength);
  EXPECT_GE(cut.length(), MovePruning::kQuickLength);
  const MovePruning same = *MovePruning::Build(4, 4, cut.length());
  EXPECT_EQ(same.length(), cut.length());
  EXPECT_EQ(same.pruned_sequences(), cut.pruned_sequences());
  EXPECT_EQ(same.states(), cut.states());
  EXPECT_LT(MovePruning::For(8, 8, MovePruning::kMaxLength)->length(), MovePruning::kMaxLength);
}

// A background build gives the machine For would, and one abandoned
// stops at once and leaves nothing behind that a later build would reuse.
TEST(MovePruning, ABackgroundBuildFinishesOrStopsWhenAbandoned) {
  {
    MachineBuild build(3, 5, MovePruning::kMaxLength);
    while (build.Ready() == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(build.Ready(), MovePruning::For(3, 5, MovePruning::kMaxLength));
  }
  const auto start = std::chrono::steady_clock::now();
  { MachineBuild abandoned(4, 4, MovePruning::kMaxLength - 1); }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  const MovePruning* built = MovePruning::For(4, 4, MovePruning::kMaxLength - 1);
  ASSERT_NE(built, nullptr);
  EXPECT_EQ(built->length(), MovePruning::kMaxLength - 1);
}

}  // namespace
}  // namespace npuzzle
