// BucketQueue: a priority queue for small non-negative integer priorities,
// one bucket per value. Push and pop cost O(1) amortised. Ties within a
// bucket are broken by a second key the caller supplies (A* passes h, so
// that of equal f the deepest node comes first): a bucket is put in order
// when popping reaches it, and afterwards the newest entry comes out
// first. For A* with a consistent heuristic that keeps the order exact, as
// every child pushed into the current bucket has a smaller h than any
// entry there; it matters most in the last bucket, where the goal is.
// Popping that returns to a bucket it left (greedy search does so on
// almost every expansion) orders it again only once it has doubled since
// it was last ordered, so ordering costs O(1) a push: ordering it on every
// return made greedy search quadratic (a 2x5 board with misplaced tiles
// spent three quarters of its time sorting the same bucket).
#ifndef NPUZZLE_ENGINE_BUCKET_QUEUE_H_
#define NPUZZLE_ENGINE_BUCKET_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace npuzzle {

class BucketQueue {
 public:
  // Forced inline: GCC kept it out of line in the best-first loop, where
  // the call cost a 3x3 A* solve 4% of its time.
  [[gnu::always_inline]] void Push(int priority, uint32_t id) {
    const size_t p = static_cast<size_t>(priority);
    if (p >= buckets_.size()) [[unlikely]]
      AddBuckets(p + 1);
    std::vector<uint32_t>& bucket = buckets_[p].ids;
    if (bucket.size() == bucket.capacity()) [[unlikely]]
      Grow(bucket);
    bucket.push_back(id);
    lowest_ = std::min(lowest_, p);
    ++size_;
  }

  // The lowest priority and the entry its bucket's order puts next: the
  // smallest tie(id), newest first among equals, by the rules above; false
  // when empty.
  template <class Tie>
  bool Pop(int* priority, uint32_t* id, Tie tie) {
    if (size_ == 0) return false;
    while (buckets_[lowest_].ids.empty()) ++lowest_;
    Bucket& bucket = buckets_[lowest_];
    if (lowest_ != popping_) [[unlikely]] {
      if (bucket.ids.size() >= 2 * bucket.ordered_size) {
        Order(bucket.ids, tie);
        bucket.ordered_size = bucket.ids.size();
      }
      popping_ = lowest_;
    }
    *priority = static_cast<int>(lowest_);
    *id = bucket.ids.back();
    bucket.ids.pop_back();
    if (bucket.ids.empty()) bucket.ordered_size = 0;
    --size_;
    return true;
  }

  size_t size() const { return size_; }
  // Kept as a running total: searches ask for it on every expansion.
  uint64_t MemoryBytes() const { return bytes_; }

 private:
  // Ordering is a linear pass (a counting sort on the ties), skipped for
  // buckets so large that it would delay a cancel or for ties so spread
  // out that the counts would cost more than the order saves: the search
  // stays correct, only less lucky in the last bucket.
  static constexpr size_t kMaxOrdered = size_t{1} << 16;
  static constexpr int kMaxTieSpread = 1 << 12;

  template <class Tie>
  [[gnu::noinline]] void Order(std::vector<uint32_t>& bucket, Tie tie) {
    if (bucket.size() < 2 || bucket.size() > kMaxOrdered) return;
    ties_.resize(bucket.size());
    int low = ties_[0] = tie(bucket[0]);
    int high = low;
    for (size_t i = 1; i < bucket.size(); ++i) {
      ties_[i] = tie(bucket[i]);
      low = std::min(low, ties_[i]);
      high = std::max(high, ties_[i]);
    }
    if (high - low >= kMaxTieSpread) return;
    // Largest tie first, so the smallest ends at the back where Pop takes
    // from; stable, so push order survives among equal ties.
    starts_.assign(static_cast<size_t>(high - low) + 2, 0);
    for (int t : ties_) ++starts_[static_cast<size_t>(high - t) + 1];
    for (size_t k = 1; k < starts_.size(); ++k) starts_[k] += starts_[k - 1];
    sorted_.resize(bucket.size());
    for (size_t i = 0; i < bucket.size(); ++i) sorted_[starts_[static_cast<size_t>(high - ties_[i])]++] = bucket[i];
    std::copy(sorted_.begin(), sorted_.end(), bucket.begin());
    bytes_ -= scratch_bytes_;
    scratch_bytes_ = ties_.capacity() * sizeof(int) + (starts_.capacity() + sorted_.capacity()) * sizeof(uint32_t);
    bytes_ += scratch_bytes_;
  }

  [[gnu::noinline]] void AddBuckets(size_t count) {
    bytes_ -= buckets_.capacity() * sizeof(Bucket);
    buckets_.resize(count);
    bytes_ += buckets_.capacity() * sizeof(Bucket);
  }

  // Out of line and rare: small searches (a 3x3 board) fill a bucket with
  // a few hundred entries, so start there rather than doubling up from one.
  [[gnu::noinline]] void Grow(std::vector<uint32_t>& bucket) {
    constexpr size_t kFirstCapacity = 256;
    const size_t before = bucket.capacity();
    bucket.reserve(before == 0 ? kFirstCapacity : 2 * before);
    bytes_ += (bucket.capacity() - before) * sizeof(uint32_t);
  }

  struct Bucket {
    std::vector<uint32_t> ids;
    size_t ordered_size = 0;  // its size when last put in order; 0 once emptied
  };

  std::vector<Bucket> buckets_;
  size_t lowest_ = 0;
  size_t popping_ = SIZE_MAX;  // the bucket the last pop took from
  size_t size_ = 0;
  uint64_t bytes_ = 0;
  // Scratch for Order, bounded by kMaxOrdered entries.
  std::vector<int> ties_;
  std::vector<uint32_t> starts_;
  std::vector<uint32_t> sorted_;
  uint64_t scratch_bytes_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_BUCKET_QUEUE_H_
