// The TSan stage's own check: with the absl::Mutex annotations preloaded,
// an access under the mutex in both threads is not reported ("locked"),
// and one thread's access without it is ("racy"). If the annotations hid
// real races, the second would pass and scripts/tsan fails.
#include <cstring>
#include <thread>

#include "absl/synchronization/mutex.h"

int main(int argc, char** argv) {
  const bool racy = argc > 1 && std::strcmp(argv[1], "racy") == 0;
  absl::Mutex mu;
  int shared = 0;
  std::thread other([&] {
    for (int i = 0; i < 1000; ++i) {
      absl::MutexLock lock(&mu);
      ++shared;
    }
  });
  for (int i = 0; i < 1000; ++i) {
    if (racy) {
      ++shared;
    } else {
      absl::MutexLock lock(&mu);
      ++shared;
    }
  }
  other.join();
  return shared > 0 ? 0 : 1;
}
