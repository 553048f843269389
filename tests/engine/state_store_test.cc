// The graph searches' stores: the index must find every state it was given
// across growth and the split into shards, and never confuse two states
// whose hashes share a tag; the hash must spread states over slots and
// shards; chunked records must keep their addresses; the open list must pop
// by priority, then tie, then newest; the block cache must hand a thread's
// freed blocks back to it, within its bounds, and to no other thread.
#include <algorithm>
#include <cstdint>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "engine/block_cache.h"
#include "engine/bucket_queue.h"
#include "engine/chunked_vector.h"
#include "engine/packed_state.h"
#include "engine/state_index.h"
#include "gtest/gtest.h"

namespace npuzzle {
namespace {

PackedState16 StateNumber(uint64_t n) {
  PackedState16 s;
  for (int c = 0; c < 16; ++c) s.Set(c, static_cast<int>((n >> (4 * c)) & 15));
  return s;
}

TEST(StateIndex, FindsEveryStateAcrossGrowthAndSplit) {
  StateIndex index;
  std::vector<PackedState16> keys;
  const uint64_t n = 3 * StateIndex::kSplitAt;  // past the split
  uint64_t last_bytes = 0;
  for (uint64_t i = 0; i < n; ++i) {
    keys.push_back(StateNumber(i * 7919));
    const uint64_t hash = keys.back().Hash();
    if (index.NeedsGrowth(hash)) {
      const uint64_t growth = index.GrowthBytes(hash);
      EXPECT_GT(growth, 0u);
      index.Grow(hash);
      EXPECT_LE(index.MemoryBytes(), last_bytes + growth);
      EXPECT_FALSE(index.NeedsGrowth(hash));
    }
    last_bytes = index.MemoryBytes();
    const auto found =
        index.FindOrAdd(hash, static_cast<uint32_t>(i), [&](uint32_t id) { return keys[id] == keys.back(); });
    ASSERT_TRUE(found.added) << i;
    ASSERT_EQ(found.id, i);
  }
  for (uint64_t i = 0; i < n; i += 97) {
    const auto found =
        index.FindOrAdd(keys[i].Hash(), UINT32_MAX - 1, [&](uint32_t id) { return keys[id] == keys[i]; });
    ASSERT_FALSE(found.added) << i;
    ASSERT_EQ(found.id, i);
  }
}

// Every stored entry shares the probed hash here, so only the caller's
// state check tells them apart.
TEST(StateIndex, EqualHashesAreToldApartByTheState) {
  StateIndex index;
  const uint64_t hash = 0x0123456789ABCDEF;
  for (uint32_t i = 0; i < 100; ++i) {
    if (index.NeedsGrowth(hash)) index.Grow(hash);
    const auto found = index.FindOrAdd(hash, i, [&](uint32_t id) { return id == i; });
    ASSERT_TRUE(found.added);
  }
  const auto again = index.FindOrAdd(hash, 1000, [](uint32_t id) { return id == 42; });
  EXPECT_FALSE(again.added);
  EXPECT_EQ(again.id, 42u);
}

// The index takes a slot from the top of the hash's high half and a shard
// from its bottom: both must spread states that differ only in a few
// cells, wherever on the board those cells are (a hash whose low bits saw
// only the first cells would put all of them in one shard).
template <class Key>
void ExpectHashSpreadsEveryWindowOfCells() {
  constexpr int kWindow = 4;
  constexpr int kValues = 16;
  constexpr int kBuckets = 256;
  for (int first = 0; first + kWindow <= Key::kCapacity; first += kWindow) {
    std::vector<int> by_slot(kBuckets), by_shard(kBuckets);
    int n = 0;
    for (int v = 0; v < kValues * kValues * kValues * kValues; ++v, ++n) {
      Key key;
      for (int c = 0; c < Key::kCapacity; ++c) key.Set(c, c % kValues);
      for (int k = 0; k < kWindow; ++k) key.Set(first + k, (v >> (4 * k)) % kValues);
      const uint32_t tag = static_cast<uint32_t>(key.Hash() >> 32);
      ++by_slot[tag >> 24];
      ++by_shard[tag % kBuckets];
    }
    const int mean = n / kBuckets;
    for (int b = 0; b < kBuckets; ++b) {
      ASSERT_GT(by_slot[b], mean / 2) << "cells " << first << ".., slot bucket " << b;
      ASSERT_LT(by_slot[b], 2 * mean) << "cells " << first << ".., slot bucket " << b;
      ASSERT_GT(by_shard[b], mean / 2) << "cells " << first << ".., shard " << b;
      ASSERT_LT(by_shard[b], 2 * mean) << "cells " << first << ".., shard " << b;
    }
  }
}

TEST(PackedState, HashSpreadsStatesThatDifferInAFewCells) {
  ExpectHashSpreadsEveryWindowOfCells<PackedState16>();
  ExpectHashSpreadsEveryWindowOfCells<PackedState32>();
  ExpectHashSpreadsEveryWindowOfCells<PackedState64>();
}

TEST(ChunkedVector, ElementsNeverMove) {
  ChunkedVector<uint64_t> v;
  std::vector<const uint64_t*> addresses;
  const size_t n = 5 * ChunkedVector<uint64_t>::kChunkElements + 3;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(v.GrowthBytes() != 0, v.size() == v.capacity());
    v.push_back(i * i);
    addresses.push_back(&v[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(&v[i], addresses[i]);
    ASSERT_EQ(v[i], i * i);
  }
}

// On a thread of its own, so that it starts with an empty cache.
void ExpectCacheReusesBlocksWithinItsBounds() {
  constexpr size_t kBlock = 64 << 10;
  ASSERT_EQ(BlockCache::CachedBytes(), 0u);
  void* first = BlockCache::Take(kBlock);
  BlockCache::Give(first, kBlock);
  EXPECT_EQ(BlockCache::CachedBytes(), kBlock);
  std::thread([&] {
    EXPECT_EQ(BlockCache::CachedBytes(), 0u) << "another thread sees this thread's cache";
    BlockCache::Give(BlockCache::Take(kBlock), kBlock);
  }).join();
  void* half = BlockCache::Take(kBlock / 2);
  EXPECT_NE(half, first) << "a block of another size was reused";
  EXPECT_EQ(BlockCache::CachedBytes(), kBlock);
  EXPECT_EQ(BlockCache::Take(kBlock), first);
  EXPECT_EQ(BlockCache::CachedBytes(), 0u);

  // Bounded in bytes and in blocks, keeping the most recently given.
  for (const size_t size : {BlockCache::kMaxBytes + 1, kBlock, size_t{16} << 10}) {
    std::vector<void*> blocks;
    for (int i = 0; i < 2 * BlockCache::kMaxBlocks; ++i) blocks.push_back(BlockCache::Take(size));
    for (void* b : blocks) BlockCache::Give(b, size);
    EXPECT_EQ(BlockCache::CachedBytes(), std::min(BlockCache::kMaxBytes / size, size_t{BlockCache::kMaxBlocks}) * size)
        << size << "-byte blocks";
    for (void*& b : blocks) b = BlockCache::Take(size);
    EXPECT_EQ(BlockCache::CachedBytes(), 0u);
    for (void* b : blocks) BlockCache::Give(b, size);
  }
  BlockCache::Give(first, kBlock);
  BlockCache::Give(half, kBlock / 2);
}

TEST(BlockCache, ReusesAThreadsBlocksWithinItsBounds) { std::thread(ExpectCacheReusesBlocksWithinItsBounds).join(); }

// Pushes all at once, then pops everything: the order must be by
// priority, then smallest tie, then newest push, as a sort says.
TEST(BucketQueue, PopsByPriorityThenTieThenNewest) {
  std::mt19937_64 rng(5);
  for (const int spread : {1, 40, 5000}) {  // 5000: beyond what Order sorts
    BucketQueue queue;
    std::vector<int> tie_of;
    std::vector<std::tuple<int, int, int>> expected;  // priority, tie, -id
    for (uint32_t id = 0; id < 3000; ++id) {
      const int priority = static_cast<int>(rng() % 7);
      tie_of.push_back(static_cast<int>(rng() % spread));
      queue.Push(priority, id);
      expected.emplace_back(priority, tie_of.back(), -static_cast<int>(id));
    }
    std::sort(expected.begin(), expected.end());
    int priority;
    uint32_t id;
    for (const auto& [want_priority, want_tie, minus_id] : expected) {
      ASSERT_TRUE(queue.Pop(&priority, &id, [&](uint32_t i) { return tie_of[i]; }));
      EXPECT_EQ(priority, want_priority);
      if (spread < 5000) {
        EXPECT_EQ(tie_of[id], want_tie);
        EXPECT_EQ(-static_cast<int>(id), minus_id);
      }
    }
    EXPECT_FALSE(queue.Pop(&priority, &id, [&](uint32_t i) { return tie_of[i]; }));
  }
}

// Entries pushed into the bucket being popped come out before older ones
// (A*'s children of equal f have a smaller h than anything queued there).
// A bucket popping returns to is ordered again only once it has doubled
// since it was last ordered; until then its newest entry comes first.
TEST(BucketQueue, NewEntriesInTheCurrentBucketComeFirst) {
  BucketQueue queue;
  const auto tie = [](uint32_t id) { return static_cast<int>(id); };
  queue.Push(3, 10);
  queue.Push(3, 5);
  int priority;
  uint32_t id;
  ASSERT_TRUE(queue.Pop(&priority, &id, tie));
  EXPECT_EQ(id, 5u);
  queue.Push(3, 20);
  queue.Push(2, 30);
  ASSERT_TRUE(queue.Pop(&priority, &id, tie));
  EXPECT_EQ(priority, 2);
  ASSERT_TRUE(queue.Pop(&priority, &id, tie));
  EXPECT_EQ(id, 20u);  // bucket 3 held 2 when ordered and holds 2 now: not reordered
  queue.Push(3, 40);
  queue.Push(3, 15);
  queue.Push(3, 25);
  queue.Push(2, 30);
  ASSERT_TRUE(queue.Pop(&priority, &id, tie));
  EXPECT_EQ(priority, 2);
  for (const uint32_t want : {10u, 15u, 25u, 40u}) {  // 4 now: ordered again
    ASSERT_TRUE(queue.Pop(&priority, &id, tie));
    EXPECT_EQ(id, want);
  }
  EXPECT_EQ(queue.size(), 0u);
}

// Greedy search leaves a bucket and returns to it on almost every
// expansion. Ordering must stay O(1) a push however often that happens
// (ordering on every return read a large bucket's ties once per pop).
TEST(BucketQueue, ReturningToABucketCostsLinearWork) {
  BucketQueue queue;
  int64_t ties_read = 0;
  const auto tie = [&](uint32_t id) {
    ++ties_read;
    return static_cast<int>(id % 7);
  };
  constexpr uint32_t kPushes = 20000;
  uint32_t next = 0;
  for (; next < kPushes / 2; ++next) queue.Push(5, next);
  int priority;
  uint32_t id;
  while (queue.size() > 0) {
    ASSERT_TRUE(queue.Pop(&priority, &id, tie));
    if (next < kPushes) queue.Push(priority == 5 ? 4 : 5, next++);
  }
  EXPECT_EQ(next, kPushes);
  EXPECT_LE(ties_read, 4 * int64_t{kPushes});
}

}  // namespace
}  // namespace npuzzle
