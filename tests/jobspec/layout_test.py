#!/usr/bin/env python3
"""Which folder may include which: dependencies run one way.

engine/ is plain C++ at the bottom; jobspec/ (the job spec and its
translation to engine calls) sits on the engine and the protocol; the
service, the worker and the client sit on top and meet only through
proto/ and jobspec/. In particular nothing outside worker/ includes a
worker/ header. The check first proves it can fail, on a planted bad
include in a scratch tree.
"""
import argparse
import os
import re
import sys
import tempfile

# For each folder, the project folders its sources may include from
# (besides their own); "npuzzle/v1" is the generated protocol.
ALLOWED = {
    "engine": set(),
    "common": set(),
    "jobspec": {"engine", "npuzzle/v1"},
    "worker": {"engine", "jobspec", "common", "npuzzle/v1"},
    "service": {"engine", "jobspec", "common", "npuzzle/v1"},
    "client": {"engine", "jobspec", "common", "npuzzle/v1"},
}
PROJECT = {"engine", "common", "jobspec", "worker", "service", "client", "tests", "bench", "npuzzle/v1"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def owner(include):
    for folder in PROJECT:
        if include.startswith(folder + "/"):
            return folder
    return None


def violations(root):
    found = []
    for top, allowed in ALLOWED.items():
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".h", ".cc", ".c", ".in")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for include in INCLUDE.findall(text):
                    folder = owner(include)
                    if folder is not None and folder != top and folder not in allowed:
                        found.append(f"{os.path.relpath(path, root)} includes {include}")
    # Beyond the folders above: tests and benchmarks may use anything but
    # the worker's own headers, which belong to the worker alone.
    for top in ("tests", "bench"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            if "node_modules" in dirpath:
                continue
            for name in files:
                if name.endswith((".h", ".cc")):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as f:
                        for include in INCLUDE.findall(f.read()):
                            if include.startswith("worker/"):
                                found.append(f"{os.path.relpath(path, root)} includes {include}")
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        os.makedirs(os.path.join(scratch, "service"))
        with open(os.path.join(scratch, "service", "planted.cc"), "w") as f:
            f.write('#include "worker/worker_agent.h"\n')
        if not violations(scratch):
            print("FAIL: the check let a planted service -> worker include through")
            return 1
    found = violations(args.root)
    for v in found:
        print("FAIL:", v)
    print(f"layout: {len(found)} includes against the dependency rules")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
