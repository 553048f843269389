// AnonymousMemory: zeroed memory straight from the kernel (an anonymous
// mapping), on huge pages where the kernel allows. Pages are faulted in
// only when touched, so allocating a gigabyte costs nothing up front (a
// table build must answer a cancel at once, not after a memset), and the
// random access of table builds and lookups misses the TLB far less.
#ifndef NPUZZLE_ENGINE_PDB_ANONYMOUS_MEMORY_H_
#define NPUZZLE_ENGINE_PDB_ANONYMOUS_MEMORY_H_

#include <sys/mman.h>

#include <cstdint>
#include <utility>

namespace npuzzle {

class AnonymousMemory {
 public:
  AnonymousMemory() = default;
  // Check ok(): false when the kernel refused.
  explicit AnonymousMemory(uint64_t bytes) : bytes_(bytes == 0 ? 1 : bytes) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    madvise(p, bytes_, MADV_HUGEPAGE);
    data_ = p;
  }
  ~AnonymousMemory() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  AnonymousMemory(AnonymousMemory&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(other.bytes_) {}
  AnonymousMemory& operator=(AnonymousMemory&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }

  bool ok() const { return data_ != nullptr; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  uint64_t bytes() const { return bytes_; }

  // Hands the mapping to the caller, who must munmap(data, bytes()).
  void* Release() { return std::exchange(data_, nullptr); }

 private:
  void* data_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_PDB_ANONYMOUS_MEMORY_H_
