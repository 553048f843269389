#include "bench/reference_ida.h"

#include <stdlib.h>

enum { kSide = 4, kCells = 16 };

static int distance[kCells][kCells];  // [tile][cell]: Manhattan distance to its goal cell
static int neighbours[kCells][4];
static int neighbour_count[kCells];
static int board[kCells];
static int next_bound;
static uint64_t generated;

static void Prepare(void) {
  for (int t = 0; t < kCells; ++t) {
    for (int c = 0; c < kCells; ++c) {
      distance[t][c] = t == 0 ? 0 : abs(t / kSide - c / kSide) + abs(t % kSide - c % kSide);
    }
  }
  for (int c = 0; c < kCells; ++c) {
    int n = 0;
    if (c >= kSide) neighbours[c][n++] = c - kSide;
    if (c < kCells - kSide) neighbours[c][n++] = c + kSide;
    if (c % kSide > 0) neighbours[c][n++] = c - 1;
    if (c % kSide < kSide - 1) neighbours[c][n++] = c + 1;
    neighbour_count[c] = n;
  }
}

// Depth of the goal below this node if within `bound`, else -1.
static int Search(int blank, int previous, int g, int h, int bound) {
  for (int i = 0; i < neighbour_count[blank]; ++i) {
    const int cell = neighbours[blank][i];
    if (cell == previous) continue;
    const int tile = board[cell];
    ++generated;
    const int child_h = h - distance[tile][cell] + distance[tile][blank];
    const int f = g + 1 + child_h;
    if (f > bound) {
      if (f < next_bound) next_bound = f;
      continue;
    }
    if (child_h == 0) return g + 1;
    board[blank] = tile;
    board[cell] = 0;
    const int found = Search(cell, blank, g + 1, child_h, bound);
    board[cell] = tile;
    board[blank] = 0;
    if (found >= 0) return found;
  }
  return -1;
}

struct ReferenceResult ReferenceIdaStar(const int tiles[16]) {
  Prepare();
  int blank = 0, h = 0;
  for (int c = 0; c < kCells; ++c) {
    board[c] = tiles[c];
    if (tiles[c] == 0) blank = c;
    h += distance[tiles[c]][c];
  }
  generated = 0;
  struct ReferenceResult result = {h == 0 ? 0 : -1, 0};
  for (int bound = h; result.length < 0; bound = next_bound) {
    next_bound = 1 << 30;
    result.length = Search(blank, -1, 0, h, bound);
  }
  result.generated = generated;
  return result;
}
