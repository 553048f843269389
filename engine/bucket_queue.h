// BucketQueue: a priority queue for small non-negative integer priorities,
// one bucket per value. Push and pop cost O(1) amortised; within a bucket
// the newest entry comes out first, which on f ties favours deeper nodes.
#ifndef NPUZZLE_ENGINE_BUCKET_QUEUE_H_
#define NPUZZLE_ENGINE_BUCKET_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace npuzzle {

class BucketQueue {
 public:
  void Push(int priority, uint32_t id) {
    const size_t p = static_cast<size_t>(priority);
    if (p >= buckets_.size()) [[unlikely]]
      AddBuckets(p + 1);
    std::vector<uint32_t>& bucket = buckets_[p];
    if (bucket.size() == bucket.capacity()) [[unlikely]]
      Grow(bucket);
    bucket.push_back(id);
    lowest_ = std::min(lowest_, p);
    ++size_;
  }

  // The lowest priority and its newest entry; false when empty.
  bool Pop(int* priority, uint32_t* id) {
    if (size_ == 0) return false;
    while (buckets_[lowest_].empty()) ++lowest_;
    *priority = static_cast<int>(lowest_);
    *id = buckets_[lowest_].back();
    buckets_[lowest_].pop_back();
    --size_;
    return true;
  }

  size_t size() const { return size_; }
  uint64_t MemoryBytes() const { return bytes_ + buckets_.capacity() * sizeof(std::vector<uint32_t>); }

 private:
  [[gnu::noinline]] void AddBuckets(size_t count) { buckets_.resize(count); }

  // Out of line and rare: small searches (a 3x3 board) fill a bucket with
  // a few hundred entries, so start there rather than doubling up from one.
  [[gnu::noinline]] void Grow(std::vector<uint32_t>& bucket) {
    constexpr size_t kFirstCapacity = 256;
    const size_t before = bucket.capacity();
    bucket.reserve(before == 0 ? kFirstCapacity : 2 * before);
    bytes_ += (bucket.capacity() - before) * sizeof(uint32_t);
  }

  std::vector<std::vector<uint32_t>> buckets_;
  size_t lowest_ = 0;
  size_t size_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_BUCKET_QUEUE_H_
