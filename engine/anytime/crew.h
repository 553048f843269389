// Crew: a fixed set of threads that run one short step after another, for
// a search whose every depth is a few parallel steps of a millisecond or
// less (engine/anytime/beam.cc). Threads started for each step, or woken
// from sleep for it, cost tens of microseconds a step: on this project's
// two-core machines a beam on two threads then ran hardly faster than on
// one. So between steps the crew's threads spin for a while before they
// sleep, and the caller spins until they are done.
#ifndef NPUZZLE_ENGINE_ANYTIME_CREW_H_
#define NPUZZLE_ENGINE_ANYTIME_CREW_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace npuzzle {

class Crew {
 public:
  // `size` threads in all: the caller's and size - 1 started here.
  explicit Crew(int size);
  ~Crew();
  Crew(const Crew&) = delete;
  Crew& operator=(const Crew&) = delete;

  int size() const { return static_cast<int>(helpers_.size()) + 1; }

  // Runs step(0) on the calling thread and step(1), ..., step(size() - 1)
  // on the others; returns when every one has returned, so what they wrote
  // is visible to the caller. One caller at a time.
  void Run(const std::function<void(int)>& step);

 private:
  void Help(int index);

  // A helper that sees a new round takes the step; one that has seen none
  // for a while sleeps on the mutex until round_ changes or closing_ is
  // set (both written under it, so a sleeper cannot miss them).
  absl::Mutex mu_;
  std::atomic<uint64_t> round_{0};
  std::atomic<bool> closing_{false};
  std::atomic<const std::function<void(int)>*> step_{nullptr};
  std::atomic<int> running_{0};  // helpers not done with this round's step
  std::vector<std::thread> helpers_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_ANYTIME_CREW_H_
