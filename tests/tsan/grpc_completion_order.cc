// The TSan stage's check of the gRPC completion-queue annotations: a
// value written before a batch starts is read, on another thread, after
// that batch's completion comes off the queue ("ordered", no report),
// and a value written after the batch starts is read the same way
// ("racy", reported). gRPC's core is not instrumented, so without the
// annotations the first would be reported too; if they ordered too much,
// the second would pass.
//
// The call goes to a lame channel, which fails every batch at once: the
// completion needs no server and no network.
#include <grpc/grpc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
  const bool racy = argc > 1 && std::strcmp(argv[1], "racy") == 0;
  grpc_init();
  grpc_completion_queue* queue = grpc_completion_queue_create_for_next(nullptr);
  grpc_channel* channel = grpc_lame_client_channel_create("lame", GRPC_STATUS_UNAVAILABLE, "no server");
  grpc_call* call = grpc_channel_create_call(channel, nullptr, GRPC_PROPAGATE_DEFAULTS, queue,
                                             grpc_slice_from_static_string("/npuzzle.Test/Order"), nullptr,
                                             gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
  grpc_metadata_array trailers;
  grpc_metadata_array_init(&trailers);
  grpc_status_code status;
  grpc_slice details;
  grpc_op ops[2] = {};
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[1].data.recv_status_on_client.trailing_metadata = &trailers;
  ops[1].data.recv_status_on_client.status = &status;
  ops[1].data.recv_status_on_client.status_details = &details;

  int shared = 0;
  int tag = 0;
  grpc_call_error started = GRPC_CALL_OK;
  // Relaxed, so TSan sees no order in it: with the pause after it, it only
  // makes the completion (queued within the call, or just after it) already
  // wait in the queue when this thread takes it, the case where gRPC hands
  // it over through its uninstrumented lock-free queue alone.
  std::atomic<bool> batch_started{false};
  std::thread starter([&] {
    if (!racy) shared = 1;
    started = grpc_call_start_batch(call, ops, 2, &tag, nullptr);
    if (racy) shared = 1;
    batch_started.store(true, std::memory_order_relaxed);
  });
  while (!batch_started.load(std::memory_order_relaxed)) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const grpc_event event = grpc_completion_queue_next(queue, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
  const int seen = shared;
  starter.join();
  if (started != GRPC_CALL_OK || event.type != GRPC_OP_COMPLETE || event.tag != &tag) {
    std::fprintf(stderr, "grpc_completion_order: the batch did not complete (start %d, event %d)\n", started,
                 event.type);
    return 2;
  }

  grpc_slice_unref(details);
  grpc_metadata_array_destroy(&trailers);
  grpc_call_unref(call);
  grpc_channel_destroy(channel);
  grpc_completion_queue_shutdown(queue);
  while (grpc_completion_queue_next(queue, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr).type != GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(queue);
  grpc_shutdown();
  return seen == 1 || racy ? 0 : 1;
}
