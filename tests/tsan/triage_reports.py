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

ACCESS = re.compile(r"^  (Previous )?(atomic )?(write|read)( of size \d+)?", re.IGNORECASE)
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


def access_stacks(report):
    """The frames under each racing access (current and previous)."""
    stacks, frames = [], None
    for line in report[1:]:
        if ACCESS.match(line):
            frames = []
            stacks.append(frames)
        elif frames is not None and FRAME.match(line):
            frames.append(line)
        elif frames is not None and not line.startswith("    "):
            frames = None
    return stacks


def inside_libraries(frames):
    for frame in frames:
        if any(s in frame for s in STANDARD_LIBRARY):
            continue
        return any(s in frame for s in LIBRARY_SOURCES) or bool(LIBRARY_MODULES.search(frame))
    return False  # an empty or unrestorable stack proves nothing


def is_library_internal(report):
    if "data race" not in report[0]:
        return False
    if any("failed to restore the stack" in line for line in report):
        return False
    stacks = access_stacks(report)
    return len(stacks) == 2 and all(inside_libraries(s) for s in stacks)


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
