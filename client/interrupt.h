// Ctrl-C while a command follows a job on a server: the first SIGINT runs
// a callback on a thread of its own (a signal handler may do almost
// nothing, and a cancel is an RPC), and puts the default action back, so a
// second Ctrl-C ends the program at once as usual.
#ifndef NPUZZLE_CLIENT_INTERRUPT_H_
#define NPUZZLE_CLIENT_INTERRUPT_H_

#include <atomic>
#include <functional>
#include <thread>

namespace npuzzle {

class InterruptGuard {
 public:
  // Until destroyed, SIGINT calls `on_interrupt` (once).
  explicit InterruptGuard(std::function<void()> on_interrupt);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  bool interrupted() const { return interrupted_; }

 private:
  int pipe_[2] = {-1, -1};
  std::atomic<bool> interrupted_{false};
  std::thread waiter_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_INTERRUPT_H_
