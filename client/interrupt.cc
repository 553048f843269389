#include "client/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <utility>

namespace npuzzle {
namespace {

// The guard's pipe, for the handler: writing a byte is all it does.
std::atomic<int> signal_pipe{-1};

void OnSigint(int) {
  const int fd = signal_pipe.load();
  if (fd >= 0) {
    const char byte = 'i';
    (void)!write(fd, &byte, 1);
  }
  signal(SIGINT, SIG_DFL);
}

}  // namespace

InterruptGuard::InterruptGuard(std::function<void()> on_interrupt) {
  if (pipe(pipe_) != 0) return;  // no guard: Ctrl-C keeps its default action
  signal_pipe = pipe_[1];
  waiter_ = std::thread([this, on_interrupt = std::move(on_interrupt)] {
    char byte = 0;
    while (read(pipe_[0], &byte, 1) < 0) {
    }
    if (byte != 'i') return;  // the guard is going away
    interrupted_ = true;
    on_interrupt();
  });
  signal(SIGINT, OnSigint);
}

InterruptGuard::~InterruptGuard() {
  if (pipe_[0] < 0) return;
  signal(SIGINT, SIG_DFL);
  signal_pipe = -1;
  const char quit = 'q';
  (void)!write(pipe_[1], &quit, 1);
  waiter_.join();
  close(pipe_[0]);
  close(pipe_[1]);
}

}  // namespace npuzzle
