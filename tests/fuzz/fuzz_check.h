// What a fuzz target does when a property fails: report and abort, so
// libFuzzer keeps the input and the replaying test fails.
#ifndef NPUZZLE_TESTS_FUZZ_FUZZ_CHECK_H_
#define NPUZZLE_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, ...)                                                \
  do {                                                                            \
    if (!(condition)) {                                                           \
      std::fprintf(stderr, "%s:%d: %s failed: ", __FILE__, __LINE__, #condition); \
      std::fprintf(stderr, __VA_ARGS__);                                          \
      std::fprintf(stderr, "\n");                                                 \
      std::abort();                                                               \
    }                                                                             \
  } while (0)

#endif  // NPUZZLE_TESTS_FUZZ_FUZZ_CHECK_H_
