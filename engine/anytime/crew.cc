#include "engine/anytime/crew.h"

#include "absl/time/clock.h"

namespace npuzzle {
namespace {

// How long a helper waits for the next step before it sleeps: longer than
// the serial work between a beam's steps, shorter than anything a person
// would see as a thread busy for nothing.
constexpr absl::Duration kSpinFor = absl::Milliseconds(2);

// One turn of a wait: a pause for the first spins (the step is about to
// come, or to end), then giving the core away, so that a crew with more
// threads than free cores still moves: the thread it waits for may be
// waiting for this one's core.
void Spin(int spins) {
  if (spins < 1024) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    std::this_thread::yield();
  }
}

}  // namespace

Crew::Crew(int size) {
  for (int i = 1; i < size; ++i) helpers_.emplace_back([this, i] { Help(i); });
}

Crew::~Crew() {
  {
    absl::MutexLock lock(&mu_);
    closing_.store(true, std::memory_order_release);
  }
  for (std::thread& t : helpers_) t.join();
}

void Crew::Run(const std::function<void(int)>& step) {
  if (helpers_.empty()) {
    step(0);
    return;
  }
  step_.store(&step, std::memory_order_relaxed);
  running_.store(static_cast<int>(helpers_.size()), std::memory_order_relaxed);
  {
    absl::MutexLock lock(&mu_);
    round_.fetch_add(1, std::memory_order_release);
  }
  step(0);
  for (int spins = 0; running_.load(std::memory_order_acquire) != 0; ++spins) Spin(spins);
}

void Crew::Help(int index) {
  uint64_t done = 0;
  for (;;) {
    const absl::Time sleep_at = absl::Now() + kSpinFor;
    for (int spins = 0; round_.load(std::memory_order_acquire) == done; ++spins) {
      if (closing_.load(std::memory_order_acquire)) return;
      if (spins % 256 == 255 && absl::Now() > sleep_at) {
        absl::MutexLock lock(&mu_);
        auto woken = [this, done] {
          return closing_.load(std::memory_order_relaxed) || round_.load(std::memory_order_relaxed) != done;
        };
        mu_.Await(absl::Condition(&woken));
      }
      Spin(spins);
    }
    done = round_.load(std::memory_order_acquire);
    (*step_.load(std::memory_order_relaxed))(index);
    running_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace npuzzle
