// ThreadSanitizer builds only: how the preloaded annotations reach the
// definition they stand in for, the next one the dynamic linker would have
// found after theirs.
#ifndef NPUZZLE_TESTS_TSAN_NEXT_DEFINITION_H_
#define NPUZZLE_TESTS_TSAN_NEXT_DEFINITION_H_

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

// The definition of `symbol` in `library` (named in the error), or abort:
// an annotation that cannot call through would change what it annotates.
template <typename F>
F NextDefinition(const char* symbol, const char* library) {
  void* f = dlsym(RTLD_NEXT, symbol);
  if (f == nullptr) {
    std::fprintf(stderr, "tsan shim: %s not found in %s\n", symbol, library);
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

#endif  // NPUZZLE_TESTS_TSAN_NEXT_DEFINITION_H_
