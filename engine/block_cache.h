// BlockCache: the large blocks a graph search allocates and frees on every
// solve (its state index, its first record chunks), kept on the thread for
// the next solve. glibc hands a freed heap top of more than about 128 KB
// back to the kernel, so every small solve faulted the same memory in
// again page by page: 24,000 page faults in 1,000 3x3 A* solves, which
// then took 15% longer on our VMs. At most kMaxBlocks blocks and kMaxBytes
// stay cached on a thread, the most recently given; others go back to the
// allocator. Cached blocks count against no search's memory limit, which
// is why the bound is small.
#ifndef NPUZZLE_ENGINE_BLOCK_CACHE_H_
#define NPUZZLE_ENGINE_BLOCK_CACHE_H_

#include <cstddef>
#include <memory>
#include <type_traits>

namespace npuzzle {

class BlockCache {
 public:
  static constexpr size_t kMaxBytes = size_t{1} << 20;
  static constexpr int kMaxBlocks = 16;

  // A block of `bytes`, reused from this thread's cache when one of that
  // exact size is there. Its contents are whatever they were.
  static void* Take(size_t bytes);
  // Keeps the block for a later Take on this thread, or frees it.
  static void Give(void* block, size_t bytes);
  // What this thread's cache holds.
  static size_t CachedBytes();
};

template <class T>
struct CachedArrayDeleter {
  size_t bytes = 0;
  void operator()(T* p) const { BlockCache::Give(p, bytes); }
};

// An array of `count` trivial T whose storage comes from the BlockCache,
// uninitialised, like std::make_unique_for_overwrite.
template <class T>
using CachedArray = std::unique_ptr<T[], CachedArrayDeleter<T>>;

template <class T>
CachedArray<T> MakeCachedArray(size_t count) {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  const size_t bytes = count * sizeof(T);
  return CachedArray<T>(static_cast<T*>(BlockCache::Take(bytes)), CachedArrayDeleter<T>{bytes});
}

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_BLOCK_CACHE_H_
