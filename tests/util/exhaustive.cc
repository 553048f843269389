#include "tests/util/exhaustive.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace npuzzle::testing {
namespace {

uint32_t Factorial(int n) { return n <= 1 ? 1 : n * Factorial(n - 1); }

}  // namespace

ExhaustiveDistances::ExhaustiveDistances(const Board& goal)
    : cells_(goal.cells()), distance_(Factorial(goal.cells()), kUnreachable) {
  const int rows = goal.rows(), cols = goal.cols();
  std::vector<uint32_t> frontier = {Rank(std::vector<int>(goal.tiles().begin(), goal.tiles().end()))};
  distance_[frontier[0]] = 0;
  for (int depth = 0; !frontier.empty(); ++depth) {
    reachable_ += static_cast<int>(frontier.size());
    diameter_ = depth;
    std::vector<uint32_t> next;
    for (uint32_t rank : frontier) {
      std::vector<int> t = Unrank(rank);
      const int b = static_cast<int>(std::find(t.begin(), t.end(), 0) - t.begin());
      const int r = b / cols, c = b % cols;
      const int neighbours[4][2] = {{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}};
      for (const auto& [nr, nc] : neighbours) {
        if (nr < 0 || nr >= rows || nc < 0 || nc >= cols) continue;
        std::swap(t[b], t[nr * cols + nc]);
        const uint32_t child = Rank(t);
        if (distance_[child] == kUnreachable) {
          distance_[child] = static_cast<int8_t>(depth + 1);
          next.push_back(child);
        }
        std::swap(t[b], t[nr * cols + nc]);
      }
    }
    frontier = std::move(next);
  }
}

uint32_t ExhaustiveDistances::Rank(const std::vector<int>& tiles) const {
  // Lehmer code: for each position, how many later values are smaller.
  uint32_t rank = 0;
  for (int i = 0; i < cells_; ++i) {
    int smaller = 0;
    for (int j = i + 1; j < cells_; ++j) smaller += tiles[j] < tiles[i];
    rank = rank * (cells_ - i) + smaller;
  }
  return rank;
}

std::vector<int> ExhaustiveDistances::Unrank(uint32_t rank) const {
  std::vector<int> digits(cells_);
  for (int i = cells_ - 1; i >= 0; --i) {
    digits[i] = static_cast<int>(rank % (cells_ - i));
    rank /= (cells_ - i);
  }
  std::vector<int> unused(cells_);
  std::iota(unused.begin(), unused.end(), 0);
  std::vector<int> tiles(cells_);
  for (int i = 0; i < cells_; ++i) {
    tiles[i] = unused[digits[i]];
    unused.erase(unused.begin() + digits[i]);
  }
  return tiles;
}

int ExhaustiveDistances::Distance(const std::vector<int>& tiles) const { return distance_[Rank(tiles)]; }

int ExhaustiveDistances::Distance(const Board& board) const {
  return Distance(std::vector<int>(board.tiles().begin(), board.tiles().end()));
}

void ExhaustiveDistances::ForEachBoard(const std::function<void(const std::vector<int>&, int)>& visit) const {
  for (uint32_t r = 0; r < distance_.size(); ++r) visit(Unrank(r), distance_[r]);
}

Board RandomArrangement(int rows, int cols, std::mt19937_64& rng) {
  std::vector<int> tiles(rows * cols);
  std::iota(tiles.begin(), tiles.end(), 0);
  std::shuffle(tiles.begin(), tiles.end(), rng);
  return *Board::Create(rows, cols, std::move(tiles));
}

}  // namespace npuzzle::testing
