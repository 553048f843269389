#!/usr/bin/env python3
"""What the TSan stage lets through: only races with both accesses inside
gRPC, protobuf or Abseil, or with one access lost and the other inside them
on memory they allocated."""

import pathlib
import subprocess
import sys
import tempfile
import unittest

TRIAGE = pathlib.Path(__file__).with_name("triage_reports.py")
RULE = "=================="


OUR_ALLOCATION = "npuzzle::Connect() /src/service/worker_service.cc:120 (npuzzle-server+0x9cde6)"
GRPC_ALLOCATION = "gpr_malloc <null> (libgpr.so.29+0x6bbd)"
LOST = "[failed to restore the stack]"


def race(first_frames, second_frames, kind="data race", allocated_by=OUR_ALLOCATION):
    lines = [RULE, f"WARNING: ThreadSanitizer: {kind} (pid=1)", "  Write of size 8 at 0x7b4 by thread T3:"]
    lines += [f"    #{i} {f}" for i, f in enumerate(first_frames)]
    lines += ["", "  Previous read of size 8 at 0x7b4 by thread T10:"]
    lines += [f"    #{i} {f}" for i, f in enumerate(second_frames)]
    lines += ["", "  Location is heap block of size 288 at 0x7b4 allocated by thread T9:",
              "    #0 operator new(unsigned long) tsan_new_delete.cpp:64 (libtsan.so.2+0x87323)",
              f"    #1 {allocated_by}",
              "", "SUMMARY: ThreadSanitizer: data race", RULE]
    return "\n".join(lines) + "\n"


GRPC = "grpc::internal::CallOpSendMessage::FinishOp(bool*) /usr/include/grpcpp/impl/call_op_set.h:333 (npuzzle-server+0x1)"
PROTOBUF = "google::protobuf::MessageLite::~MessageLite() /usr/include/google/protobuf/message_lite.h:171 (npuzzle-server+0x2)"
STD = "std::function<void (bool)>::operator=(decltype(nullptr)) /usr/include/c++/12/bits/std_function.h:507 (npuzzle-server+0x3)"
GRPC_CORE = "<null> <null> (libgrpc++.so.1.51+0xa21ed)"
OURS = "npuzzle::Session::Enqueue() /src/service/worker_service.cc:64 (npuzzle-server+0x4)"
LIBPROTOBUF = "google::protobuf::MessageLite::ParseFromZeroCopyStream() <null> (libprotobuf.so.32+0x11f589)"
GENERATED = "npuzzle::v1::Job::SharedDtor() /src/build/proto/gen/npuzzle/v1/solver.pb.cc:3471 (npuzzle-server+0x5)"


class TriageTest(unittest.TestCase):
    def triage(self, *logs):
        with tempfile.TemporaryDirectory() as d:
            for i, text in enumerate(logs):
                pathlib.Path(d, f"report.{i}").write_text(text)
            return subprocess.run([sys.executable, TRIAGE, d], capture_output=True, text=True).returncode

    def test_passes_with_no_reports(self):
        self.assertEqual(self.triage(), 0)

    def test_passes_a_race_between_two_pieces_of_library_code(self):
        self.assertEqual(self.triage(race([GRPC], [PROTOBUF]), race([GRPC_CORE], [GRPC])), 0)

    def test_looks_past_the_standard_library_to_who_called_it(self):
        self.assertEqual(self.triage(race([STD, GRPC], [GRPC])), 0)
        self.assertEqual(self.triage(race([STD, OURS, GRPC], [GRPC])), 1)

    def test_fails_when_either_access_is_ours(self):
        self.assertEqual(self.triage(race([GRPC], [OURS])), 1)
        self.assertEqual(self.triage(race([OURS], [GRPC])), 1)
        self.assertEqual(self.triage(race([GRPC], [PROTOBUF]), race([OURS], [OURS])), 1)

    def test_generated_message_code_counts_as_whoever_called_it(self):
        # gRPC parsing a received message into our reactor's buffer, twice.
        self.assertEqual(self.triage(race([GENERATED, LIBPROTOBUF], [GENERATED, LIBPROTOBUF])), 0)
        # Our code destroying or reading a message.
        self.assertEqual(self.triage(race([GENERATED, OURS], [PROTOBUF])), 1)
        self.assertEqual(self.triage(race([GENERATED], [PROTOBUF])), 1)

    def test_fails_when_a_stack_is_missing(self):
        self.assertEqual(self.triage(race([GRPC], [LOST])), 1)
        self.assertEqual(self.triage(race([GRPC], [])), 1)

    def test_a_lost_stack_passes_only_beside_library_code_on_library_memory(self):
        self.assertEqual(self.triage(race([GRPC], [LOST], allocated_by=GRPC_ALLOCATION)), 0)
        self.assertEqual(self.triage(race([LOST], [STD, GRPC], allocated_by=GRPC_ALLOCATION)), 0)
        self.assertEqual(self.triage(race([GRPC], [LOST])), 1)  # memory we allocated
        self.assertEqual(self.triage(race([OURS], [LOST], allocated_by=GRPC_ALLOCATION)), 1)
        self.assertEqual(self.triage(race([LOST], [LOST], allocated_by=GRPC_ALLOCATION)), 1)

    def test_fails_on_every_report_that_is_not_a_race(self):
        self.assertEqual(self.triage(race([GRPC], [GRPC], kind="heap-use-after-free")), 1)
        self.assertEqual(self.triage(race([GRPC], [GRPC], kind="lock-order-inversion (potential deadlock)")), 1)

    def test_fails_on_a_log_it_cannot_read(self):
        self.assertEqual(self.triage("ThreadSanitizer: something unexpected\n"), 1)
        self.assertEqual(self.triage(race([GRPC], [GRPC])[:200]), 1)


if __name__ == "__main__":
    unittest.main()
