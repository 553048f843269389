// ChunkedVector: an append-only array kept in fixed-size chunks that never
// move, so a huge search grows without ever copying what it holds: a growth
// step is one allocation, never a pause proportional to the size (searches
// must notice a cancel within 50 ms). Chunks are about 64 KiB: small enough
// that malloc serves them from its heap rather than one mapping each (the
// kernel caps a process's mappings), and a power of two in elements, so
// finding an element is a shift and a mask.
#ifndef NPUZZLE_ENGINE_CHUNKED_VECTOR_H_
#define NPUZZLE_ENGINE_CHUNKED_VECTOR_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "engine/block_cache.h"

namespace npuzzle {

template <class T>
class ChunkedVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static constexpr size_t kChunkElements = std::bit_floor(std::max<size_t>(1, (size_t{64} << 10) / sizeof(T)));

  T& operator[](size_t i) { return *std::launder(reinterpret_cast<T*>(At(i).bytes)); }
  const T& operator[](size_t i) const { return *std::launder(reinterpret_cast<const T*>(At(i).bytes)); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }

  // What the next push_back allocates (0 when it fits).
  size_t GrowthBytes() const { return size_ < capacity() ? 0 : kChunkElements * sizeof(T); }

  void push_back(const T& value) { emplace_back() = value; }

  // A new default-initialized element, for callers that fill it in place.
  T& emplace_back() {
    if (size_ == capacity_) {
      chunks_.push_back(MakeCachedArray<Storage>(kChunkElements));
      capacity_ += kChunkElements;
    }
    return *new (At(size_++).bytes) T;
  }

 private:
  static constexpr int kShift = std::countr_zero(kChunkElements);
  static constexpr size_t kMask = kChunkElements - 1;

  // Raw storage, so that a new chunk is not initialised element by element
  // (a T with default member initialisers would be): each element is
  // constructed when it is appended.
  struct Storage {
    alignas(T) std::byte bytes[sizeof(T)];
  };

  Storage& At(size_t i) { return chunks_[i >> kShift][i & kMask]; }
  const Storage& At(size_t i) const { return chunks_[i >> kShift][i & kMask]; }

  std::vector<CachedArray<Storage>> chunks_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_CHUNKED_VECTOR_H_
