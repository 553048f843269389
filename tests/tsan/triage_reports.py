#!/usr/bin/env python3
"""Fails on every ThreadSanitizer report in a directory of TSan logs except
data races whose two accesses are both inside gRPC, protobuf or Abseil.

Debian builds those libraries without TSan, so it cannot see the
synchronization they do inside themselves (gRPC's completion queues and
call combiners order a message's serialization before its write callback,
for example). Their header code is compiled into our programs and
instrumented, though, so TSan reports those orderings as races between two
pieces of library code. TSan's own suppressions cannot say "both accesses":
a `race:` rule drops a report when either stack matches, which would also
hide a race between library code and ours. So the logs are written with
exitcode=0 and judged here.

TSan keeps a bounded history, so under load it sometimes cannot restore
the earlier access's stack. Such a race still passes when the access it
does show is library code and the memory is a block the library allocated
for itself (a gRPC call object, say): our code reaches inside those only
through the library's header code, which the rule above already counts as
the library's. A lost stack on memory we allocated, or beside an access of
ours, fails as before.

Code protoc generated for our messages (build/proto/gen) belongs to whoever
calls it, like the standard library: gRPC parsing a received message into
a buffer our reactor owns is gRPC's access; our code reading a field is
ours.

Usage: triage_reports.py LOG_DIR   (exit 1 if any report is ours or unclear)
"""

import pathlib
import re
import sys

# Where an access counts as inside the uninstrumented libraries: the first
# frame of its stack that is not the C++ standard library (std::function,
# std::swap and friends run inside whoever called them) lies in one of these.
LIBRARY_SOURCES = (
    # gRPC C++ headers: reactors, call op sets, interceptors, callback tags.
    "/usr/include/grpcpp/",
    # gRPC core's C headers (slices, byte buffers) inlined into the above.
    "/usr/include/grpc/",
    # protobuf runtime headers (arenas, repeated fields, parse contexts).
    "/usr/include/google/protobuf/",
    # Abseil headers, for code the preloaded mutex annotations do not cover.
    "/usr/include/absl/",
)
# Frames TSan shows without a source file, inside the libraries themselves.
LIBRARY_MODULES = re.compile(r"\((lib(grpc|gpr|protobuf|absl)[^ )]*\.so[^ )]*)\+0x")
STANDARD_LIBRARY = ("/usr/include/c++/",)
# protoc's generated message code (parsing, clearing, destroying) runs
# inside whoever called it, as the standard library does: gRPC's parse of
# a message it received, or our code reading a field.
GENERATED_MESSAGES = re.compile(r"/proto/gen/\S*\.pb\.(cc|h):")
SANITIZER = re.compile(r"\(libtsan\.so")
LOST = "failed to restore the stack"

ACCESS = re.compile(r"^  (Previous )?(atomic )?(write|read)( of size \d+)?", re.IGNORECASE)
ALLOCATION = re.compile(r"^  Location is heap block .* allocated by")
FRAME = re.compile(r"^    #\d+ ")


def split_reports(text):
    """Yields each report's lines, from its WARNING line to its end marker."""
    current = None
    for line in text.splitlines():
        if "WARNING: ThreadSanitizer:" in line:
            current = [line]
        elif current is not None:
            if line.startswith("=================="):
                yield current
                current = None
            else:
                current.append(line)
    if current is not None:
        yield current


def stacks_under(report, header):
    """The frames under each line that matches `header` (a lost stack is
    an empty one)."""
    stacks, frames = [], None
    for line in report[1:]:
        if header.match(line):
            frames = []
            stacks.append(frames)
        elif frames is not None and FRAME.match(line):
            if LOST not in line:
                frames.append(line)
        elif frames is not None and not line.startswith("    "):
            frames = None
    return stacks


def in_libraries(frames, skip=()):
    """Whether the first frame that is not the standard library (nor one of
    `skip`) lies in the libraries."""
    for frame in frames:
        if (any(s in frame for s in STANDARD_LIBRARY) or GENERATED_MESSAGES.search(frame) or
                any(p.search(frame) for p in skip)):
            continue
        return any(s in frame for s in LIBRARY_SOURCES) or bool(LIBRARY_MODULES.search(frame))
    return False  # an empty or unrestorable stack proves nothing


def is_library_internal(report):
    if "data race" not in report[0]:
        return False
    stacks = stacks_under(report, ACCESS)
    if len(stacks) != 2:
        return False
    if not any(LOST in line for line in report):
        return all(in_libraries(s) for s in stacks)
    shown = [s for s in stacks if s]
    allocations = stacks_under(report, ALLOCATION)
    return (len(shown) == 1 and in_libraries(shown[0]) and len(allocations) == 1 and
            in_libraries(allocations[0], skip=(SANITIZER,)))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ours, library = [], 0
    for log in sorted(pathlib.Path(sys.argv[1]).iterdir()):
        text = log.read_text(errors="replace")
        reports = list(split_reports(text))
        if not reports and "ThreadSanitizer" in text:
            ours.append((log.name, text.splitlines()))
        for report in reports:
            if is_library_internal(report):
                library += 1
            else:
                ours.append((log.name, report))
    for name, report in ours:
        print(f"--- {name}")
        print("\n".join(report))
    print(f"tsan: {library} report(s) inside gRPC/protobuf/Abseil only, {len(ours)} report(s) that fail the run")
    sys.exit(1 if ours else 0)


if __name__ == "__main__":
    main()
