// ThreadSanitizer builds only. Debian's gRPC core is not built with TSan,
// so TSan cannot see the order gRPC promises between starting a batch of
// operations with a tag and that tag's completion coming off a completion
// queue: a completion often reaches the queue's reader through a lock-free
// queue inside the core, with nothing instrumented on the way. Everything
// a thread did before starting a batch, such as building the reactor whose
// method the completion calls, then looks unordered with the callback that
// reads it. These two definitions, preloaded into TSan test processes,
// wrap the core's entry points: starting a batch releases its tag, and
// taking a completion acquires it, as an instrumented gRPC would show.
// gRPC's C++ library calls both through the dynamic linker, so a preloaded
// definition stands in for the core's, and calls the real one.
#include <grpc/grpc.h>

#include "tests/tsan/next_definition.h"

extern "C" {
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
}

namespace {

using StartBatchFn = grpc_call_error (*)(grpc_call*, const grpc_op*, size_t, void*, void*);
using NextFn = grpc_event (*)(grpc_completion_queue*, gpr_timespec, void*);

}  // namespace

extern "C" {

grpc_call_error grpc_call_start_batch(grpc_call* call, const grpc_op* ops, size_t nops, void* tag, void* reserved) {
  static const auto real = NextDefinition<StartBatchFn>("grpc_call_start_batch", "gRPC");
  __tsan_release(tag);
  return real(call, ops, nops, tag, reserved);
}

grpc_event grpc_completion_queue_next(grpc_completion_queue* cq, gpr_timespec deadline, void* reserved) {
  static const auto real = NextDefinition<NextFn>("grpc_completion_queue_next", "gRPC");
  const grpc_event event = real(cq, deadline, reserved);
  if (event.type == GRPC_OP_COMPLETE) __tsan_acquire(event.tag);
  return event;
}

}  // extern "C"
