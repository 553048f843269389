// StateIndex: finds the record id of a state in a graph search. It is an
// open-addressing table (linear probing, at most three quarters full) of
// 8-byte entries: a record id and 32 bits of the state's hash. Keys stay
// in the records; the caller confirms a hash match against the record.
// Small entries matter more than anything else here: a 3x3 A* solve
// spends most of its time waiting on index probes, and 4,096 entries fit
// in L1.
//
// While small it is one table; past kSplitAt entries it splits into kShards
// tables chosen by hash bits, so a growth step rehashes at most 1/kShards
// of what it holds and no insertion pauses a search for long (cancellation
// must land within 50 ms even while the set grows). Growth is explicit
// (NeedsGrowth, GrowthBytes, Grow) so that the caller can check its memory
// limit first, and the lookup stays small enough to inline.
#ifndef NPUZZLE_ENGINE_STATE_INDEX_H_
#define NPUZZLE_ENGINE_STATE_INDEX_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "engine/block_cache.h"

namespace npuzzle {

class StateIndex {
 public:
  static constexpr size_t kSplitAt = size_t{1} << 18;
  static constexpr int kShardBits = 8;
  static constexpr size_t kShards = size_t{1} << kShardBits;

  struct Found {
    uint32_t id;
    bool added;
  };

  // Room for `entries` without growing, while the index is one table; what
  // that allocates is ReserveBytes(entries).
  void Reserve(size_t entries) {
    if (shards_.empty() && entries < kSplitAt && entries > whole_.Holds()) Rebuild(whole_, CapacityFor(entries));
  }
  static uint64_t ReserveBytes(size_t entries) { return Table::Bytes(CapacityFor(entries)); }

  // Whether adding a state with this hash must first Grow(). One compare
  // while the index is one table.
  bool NeedsGrowth(uint64_t hash) const {
    if (whole_.size() < whole_room_) return false;
    if (shards_.empty()) return true;
    const Table& shard = shards_[ShardOf(Tag(hash))];
    return shard.size() + 1 > shard.Holds();
  }

  // Bytes that Grow(hash) allocates beyond MemoryBytes(): the new storage,
  // held together with the old while entries move.
  uint64_t GrowthBytes(uint64_t hash) const {
    if (shards_.empty()) {
      if (whole_.size() + 1 >= kSplitAt) return kShards * Table::Bytes(CapacityFor(2 * kSplitAt / kShards));
      return Table::Bytes(std::max(2 * whole_.capacity(), kMinCapacity));
    }
    return Table::Bytes(2 * shards_[ShardOf(Tag(hash))].capacity());
  }

  // Makes room for one more state with this hash: doubles its table, or
  // past kSplitAt entries splits the one table into shards.
  void Grow(uint64_t hash) {
    if (shards_.empty() && whole_.size() + 1 >= kSplitAt) {
      Split();
    } else {
      Table& table = TableFor(Tag(hash));
      Rebuild(table, 2 * table.capacity());
    }
  }

  // The id of the state with this hash for which is_state(id) holds, or
  // `id_if_new` after storing it. NeedsGrowth(hash) must be false.
  template <class IsState>
  Found FindOrAdd(uint64_t hash, uint32_t id_if_new, IsState is_state) {
    const uint32_t tag = Tag(hash);
    return TableFor(tag).FindOrAdd(tag, id_if_new, is_state);
  }

  // Starts fetching the slot a lookup of this hash will probe first.
  void Prefetch(uint64_t hash) const {
    const uint32_t tag = Tag(hash);
    (shards_.empty() ? whole_ : shards_[ShardOf(tag)]).Prefetch(tag);
  }

  uint64_t MemoryBytes() const { return bytes_; }

 private:
  static constexpr size_t kMinCapacity = 16;

  // Ids are stored plus one, so that zeroed memory (which the allocator
  // hands out fastest) is an empty table.
  struct Entry {
    uint32_t id_plus_one;  // 0: a free slot
    uint32_t tag;
  };

  // The hash's high half, well mixed: its top bits choose a slot, its low
  // bits a shard, so the two choices are independent.
  static uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
  static size_t ShardOf(uint32_t tag) { return tag & (kShards - 1); }

  class Table {
   public:
    static uint64_t Bytes(size_t capacity) { return capacity * sizeof(Entry); }

    size_t size() const { return size_; }
    size_t capacity() const { return capacity_; }
    // Three quarters, not half: the longer probes cost less than growing
    // twice as often (a 3x3 A* solve took 10% longer at half).
    size_t Holds() const { return capacity_ / 4 * 3; }

    void Allocate(size_t capacity) {
      // memset, not value-initialisation: the compiler zeroes an array of
      // structs one element at a time.
      entries_ = MakeCachedArray<Entry>(capacity);
      std::memset(entries_.get(), 0, Bytes(capacity));
      capacity_ = capacity;
      shift_ = 32 - std::countr_zero(capacity);
      size_ = 0;
    }

    template <class IsState>
    Found FindOrAdd(uint32_t tag, uint32_t id_if_new, IsState is_state) {
      const size_t mask = capacity_ - 1;
      for (size_t i = tag >> shift_;; i = (i + 1) & mask) {
        Entry& e = entries_[i];
        if (e.id_plus_one == 0) {
          e = Entry{id_if_new + 1, tag};
          ++size_;
          return {id_if_new, true};
        }
        if (e.tag == tag && is_state(e.id_plus_one - 1)) return {e.id_plus_one - 1, false};
      }
    }

    void Prefetch(uint32_t tag) const {
      if (capacity_ != 0) __builtin_prefetch(&entries_[tag >> shift_]);
    }

    // Adds an entry known to be absent.
    void AddNew(const Entry& entry) {
      const size_t mask = capacity_ - 1;
      size_t i = entry.tag >> shift_;
      while (entries_[i].id_plus_one != 0) i = (i + 1) & mask;
      entries_[i] = entry;
      ++size_;
    }

    template <class Visit>
    void ForEach(Visit visit) const {
      for (size_t i = 0; i < capacity_; ++i) {
        if (entries_[i].id_plus_one != 0) visit(entries_[i]);
      }
    }

   private:
    CachedArray<Entry> entries_;
    size_t capacity_ = 0;
    int shift_ = 32;
    size_t size_ = 0;
  };

  // The smallest power of two that holds `entries` at most half full, so
  // that a reserved table does not grow soon after.
  static size_t CapacityFor(size_t entries) { return std::max(kMinCapacity, std::bit_ceil(2 * entries)); }
  Table& TableFor(uint32_t tag) { return shards_.empty() ? whole_ : shards_[ShardOf(tag)]; }

  void Rebuild(Table& table, size_t capacity) {
    Table bigger;
    bigger.Allocate(std::max(capacity, kMinCapacity));
    table.ForEach([&](const Entry& e) { bigger.AddNew(e); });
    bytes_ += Table::Bytes(bigger.capacity()) - Table::Bytes(table.capacity());
    table = std::move(bigger);
    if (shards_.empty()) whole_room_ = std::min(whole_.Holds(), kSplitAt - 1);
  }

  void Split() {
    shards_.resize(kShards);
    for (Table& t : shards_) {
      t.Allocate(CapacityFor(2 * kSplitAt / kShards));
      bytes_ += Table::Bytes(t.capacity());
    }
    whole_.ForEach([&](const Entry& e) { shards_[ShardOf(e.tag)].AddNew(e); });
    bytes_ -= Table::Bytes(whole_.capacity());
    whole_ = Table();
    whole_room_ = 0;
  }

  Table whole_;
  // Entries the one table takes before it grows or splits; 0 once split.
  size_t whole_room_ = 0;
  std::vector<Table> shards_;
  uint64_t bytes_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_STATE_INDEX_H_
