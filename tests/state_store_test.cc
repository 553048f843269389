// The graph searches' stores: the index must find every state it was given
// across growth and the split into shards, and never confuse two states
// whose hashes share a tag; chunked records must keep their addresses.
#include <cstdint>
#include <vector>

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

}  // namespace
}  // namespace npuzzle
