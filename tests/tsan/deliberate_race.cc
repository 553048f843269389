// The TSan stage's own check of the Abseil annotations. With them
// preloaded:
// - "locked": an access under an absl::Mutex in both threads is not
//   reported, and "racy", one thread's access without it, is;
// - "notified": a write before absl::Notification::Notify, read after
//   WaitForNotification returns, is not reported, and "notified_late", a
//   write after Notify, is.
// If the annotations hid real races, a second case would pass and
// scripts/tsan fails.
#include <atomic>
#include <cstring>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace {

int Counted(bool racy) {
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

int Notified(bool late) {
  absl::Notification done;
  int shared = 0;
  // Relaxed, so TSan sees no order in it: it only makes the wait below
  // find the notification already given, where Abseil's uninstrumented
  // code returns at once, through an atomic TSan does not see.
  std::atomic<bool> given{false};
  std::thread other([&] {
    if (!late) shared = 1;
    done.Notify();
    if (late) shared = 1;
    given.store(true, std::memory_order_relaxed);
  });
  while (!given.load(std::memory_order_relaxed)) std::this_thread::yield();
  done.WaitForNotification();
  const int seen = shared;
  other.join();
  return seen == 1 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "notified") == 0) return Notified(false);
  if (std::strcmp(mode, "notified_late") == 0) return Notified(true);
  return Counted(std::strcmp(mode, "racy") == 0);
}
