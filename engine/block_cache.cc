#include "engine/block_cache.h"

#include <algorithm>

namespace npuzzle {
namespace {

struct ThreadBlocks {
  struct Cached {
    void* block;
    size_t bytes;
  };
  Cached blocks[BlockCache::kMaxBlocks];
  int count = 0;
  size_t bytes = 0;
  // Set once the thread's objects are being destroyed: a block given back
  // after that (by a static object that outlives the main thread's
  // thread-locals) is freed at once.
  bool closed = false;

  ~ThreadBlocks() {
    for (int i = 0; i < count; ++i) ::operator delete(blocks[i].block);
    count = 0;
    bytes = 0;
    closed = true;
  }
};
thread_local ThreadBlocks tls_blocks;

}  // namespace

void* BlockCache::Take(size_t bytes) {
  ThreadBlocks& t = tls_blocks;
  for (int i = t.count - 1; i >= 0; --i) {
    if (t.blocks[i].bytes == bytes) {
      void* block = t.blocks[i].block;
      std::copy(t.blocks + i + 1, t.blocks + t.count, t.blocks + i);
      --t.count;
      t.bytes -= bytes;
      return block;
    }
  }
  return ::operator new(bytes);
}

// The least recently given blocks make room: after a large search the
// cache holds its last record chunks, which the next search would not
// otherwise be able to put its index beside.
void BlockCache::Give(void* block, size_t bytes) {
  if (block == nullptr) return;
  ThreadBlocks& t = tls_blocks;
  if (bytes > kMaxBytes || t.closed) {
    ::operator delete(block);
    return;
  }
  int evicted = 0;
  while (t.count - evicted == kMaxBlocks || t.bytes + bytes > kMaxBytes) {
    ::operator delete(t.blocks[evicted].block);
    t.bytes -= t.blocks[evicted++].bytes;
  }
  std::copy(t.blocks + evicted, t.blocks + t.count, t.blocks);
  t.count -= evicted;
  t.blocks[t.count++] = ThreadBlocks::Cached{block, bytes};
  t.bytes += bytes;
}

size_t BlockCache::CachedBytes() { return tls_blocks.bytes; }

}  // namespace npuzzle
