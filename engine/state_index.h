// StateIndex: finds the record id of a packed state in a graph search. It
// is one hash table while small; past kSplitAt entries it splits into
// kShards tables chosen by the hash's top bits, so a growth step rehashes
// at most 1/kShards of what it holds and no insertion pauses a search for
// long (cancellation must land within 50 ms even while the set grows).
// Each key is hashed once per insertion, by the caller, who needs the
// hash to ask GrowthBytes() before the table grows.
#ifndef NPUZZLE_ENGINE_STATE_INDEX_H_
#define NPUZZLE_ENGINE_STATE_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"

namespace npuzzle {

template <class Key>
class StateIndex {
 public:
  static constexpr size_t kSplitAt = size_t{1} << 18;
  static constexpr int kShardBits = 8;
  static constexpr size_t kShards = size_t{1} << kShardBits;

  struct Found {
    uint32_t id;
    bool added;
  };

  static size_t Hash(const Key& key) { return absl::Hash<Key>{}(key); }

  // Bytes that adding one more key with this hash may allocate, beyond
  // MemoryBytes(), at the moment of the growth (old and new storage both
  // held while the table rehashes).
  uint64_t GrowthBytes(size_t hash) const {
    if (shards_.empty()) {
      if (whole_.size() + 1 >= kSplitAt) return TableBytes(2 * whole_.size());
      return GrowthOf(whole_);
    }
    return GrowthOf(shards_[ShardOf(hash)]);
  }

  // The id stored for `key`, or `id_if_new` after storing it.
  Found FindOrAdd(const Key& key, size_t hash, uint32_t id_if_new) {
    if (shards_.empty() && whole_.size() + 1 >= kSplitAt) Split();
    Table& table = shards_.empty() ? whole_ : shards_[ShardOf(hash)];
    const auto [it, added] = table.template try_emplace<Hashed>(Hashed{key, hash}, id_if_new);
    return {it->second, added};
  }

  uint64_t MemoryBytes() const {
    uint64_t bytes = TableBytes(whole_.capacity());
    for (const Table& t : shards_) bytes += TableBytes(t.capacity());
    return bytes;
  }

 private:
  // A key with its hash already computed, for lookups that must not hash
  // twice.
  struct Hashed {
    const Key& key;
    size_t hash;
    operator Key() const { return key; }  // how a new entry's key is made
  };
  struct HashFn {
    using is_transparent = void;
    size_t operator()(const Key& k) const { return Hash(k); }
    size_t operator()(const Hashed& h) const { return h.hash; }
  };
  struct EqFn {
    using is_transparent = void;
    bool operator()(const Key& a, const Key& b) const { return a == b; }
    bool operator()(const Hashed& a, const Key& b) const { return a.key == b; }
    bool operator()(const Key& a, const Hashed& b) const { return a == b.key; }
  };
  using Table = absl::flat_hash_map<Key, uint32_t, HashFn, EqFn>;

  static size_t ShardOf(size_t hash) { return hash >> (64 - kShardBits); }

  static uint64_t TableBytes(size_t capacity) {
    return capacity * (sizeof(typename Table::value_type) + 1);
  }

  // absl's tables grow to 2 * capacity + 1 when 7/8 full.
  static uint64_t GrowthOf(const Table& t) {
    return t.size() + 1 > t.capacity() * 7 / 8 ? TableBytes(2 * t.capacity() + 1) : 0;
  }

  void Split() {
    shards_.resize(kShards);
    for (Table& t : shards_) t.reserve(2 * whole_.size() / kShards);
    for (const auto& [key, id] : whole_) shards_[ShardOf(Hash(key))].emplace(key, id);
    Table().swap(whole_);
  }

  Table whole_;
  std::vector<Table> shards_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_STATE_INDEX_H_
