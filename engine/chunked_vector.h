// ChunkedVector: an append-only array kept in chunks that never move. The
// first chunks are small and double in size up to a fixed cap, so a tiny
// search allocates a few kilobytes while a huge one grows without ever
// copying what it holds: a growth step is one allocation, never a pause
// proportional to the size (searches must notice a cancel within 50 ms).
#ifndef NPUZZLE_ENGINE_CHUNKED_VECTOR_H_
#define NPUZZLE_ENGINE_CHUNKED_VECTOR_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace npuzzle {

template <class T>
class ChunkedVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static constexpr int kFirstChunkBits = 8;
  static constexpr int kLastChunkBits = 20;  // then every chunk is this size

  T& operator[](size_t i) { return Locate(i); }
  const T& operator[](size_t i) const { return const_cast<ChunkedVector*>(this)->Locate(i); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }

  // What the next push_back allocates (0 when it fits).
  size_t GrowthBytes() const {
    return size_ < capacity_ ? 0 : ChunkSize(chunks_.size()) * sizeof(T);
  }

  void push_back(const T& value) {
    if (size_ == capacity_) {
      const size_t n = ChunkSize(chunks_.size());
      chunks_.push_back(std::make_unique_for_overwrite<T[]>(n));
      capacity_ += n;
    }
    Locate(size_++) = value;
  }

 private:
  static constexpr size_t kFirst = size_t{1} << kFirstChunkBits;
  static constexpr int kDoublingChunks = kLastChunkBits - kFirstChunkBits;
  // Indices below this live in the doubling chunks.
  static constexpr size_t kDoublingEnd = kFirst * ((size_t{1} << kDoublingChunks) - 1);

  static size_t ChunkSize(size_t chunk) {
    return chunk < kDoublingChunks ? kFirst << chunk : size_t{1} << kLastChunkBits;
  }

  T& Locate(size_t i) {
    if (i < kDoublingEnd) {
      // Chunk c starts at kFirst * (2^c - 1).
      const size_t c = std::bit_width((i >> kFirstChunkBits) + 1) - 1;
      return chunks_[c][i - kFirst * ((size_t{1} << c) - 1)];
    }
    const size_t j = i - kDoublingEnd;
    return chunks_[kDoublingChunks + (j >> kLastChunkBits)][j & ((size_t{1} << kLastChunkBits) - 1)];
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_CHUNKED_VECTOR_H_
