#!/usr/bin/env python3
"""Every shell example in the README and in docs/ runs, as written.

Each fenced ```sh block runs with bash (-euo pipefail) in a network
namespace of its own, so the service's default ports (50051, 50052, 8080,
9090) are free there, beside an npuzzle-server with two local workers
started on those ports, in a scratch directory that sees the repository's
folders, with build/bin first on the PATH. It must exit 0. A block after
`<!-- example: own-server -->` starts its own server and gets none.

Blocks marked ```sh norun need what a test machine does not have (a
cluster, a Docker engine, grpcurl, hours of benchmark): they must parse,
and every --flag they give an npuzzle program or a benchmark must be one
that program lists in its --help.

Needs root for the namespaces (CI runs as root); elsewhere it reports
itself skipped (exit 77).

    examples_test.py --root REPO --bin BUILD/bin [--only FILE]
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

SKIPPED = 77
BLOCK_SECONDS = 240
OWN_SERVER = "<!-- example: own-server -->"


def blocks(path):
    """(line, info, text, own_server) for each fenced block of a markdown file."""
    found = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*(.*)$", lines[i])
        if not m:
            i += 1
            continue
        info = (m.group(1) + " " + m.group(2)).strip()
        own = i > 0 and lines[i - 1].strip() == OWN_SERVER
        start = i + 1
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        found.append((start, info, "\n".join(lines[start:i]) + "\n", own))
        i += 1
    return found


def commands(text):
    """Each command of a block, continuations joined and comments dropped,
    split at pipes and command separators."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.split("\n"):
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            words = line.split()
        command = []
        for word in words + [";"]:
            if word in ("|", "||", "&&", ";", "&"):
                if command:
                    out.append(command)
                command = []
            else:
                command.append(word)
    return out


class Flags:
    """The flags each program lists in its --help (and, for Abseil's
    benchmark programs, --helpfull)."""

    def __init__(self, bin_dir):
        self.bin = bin_dir
        self.cache = {}

    def of(self, program, command=None):
        key = (program, command)
        if key not in self.cache:
            argv = [os.path.join(self.bin, program)] + ([command] if command else [])
            text = ""
            for ask in ("--help", "--helpfull"):
                r = subprocess.run(argv + [ask], capture_output=True, text=True, timeout=60)
                text += r.stdout + r.stderr
            names = set(re.findall(r"--([A-Za-z0-9_-]+)", text))
            self.cache[key] = {n.replace("_", "-") for n in names}
        return self.cache[key]


def check_flags(block, flags):
    """Problems with the flags a norun block gives npuzzle programs and
    benchmarks."""
    problems = []
    for words in commands(block):
        while words and re.match(r"^[A-Z_]+=", words[0]):
            words = words[1:]  # VAR=value before the program
        if not words:
            continue
        program = os.path.basename(words[0])
        if not (program.startswith("npuzzle") or words[0].startswith("build/bin/")):
            continue
        if not os.path.exists(os.path.join(flags.bin, program)):
            problems.append(f"{words[0]}: no such program in build/bin")
            continue
        command = words[1] if program == "npuzzle" and len(words) > 1 and not words[1].startswith("-") else None
        if program == "npuzzle-server" and len(words) > 1 and words[1] == "backup":
            command = "backup"
        known = flags.of(program, command)
        for word in words[1:]:
            if word.startswith("--"):
                name = word[2:].split("=", 1)[0].replace("_", "-")
                if name not in known:
                    problems.append(f"{' '.join(words[:2])}: no flag --{name}")
    return problems


RUNNER = r"""
set -u
ip link set lo up
cd "$SCRATCH"
server=
if [[ $WITH_SERVER == 1 ]]; then
  rm -f "$SCRATCH/.ports"
  npuzzle-server --local-workers=2 --data-dir=npuzzle-data --port-file="$SCRATCH/.ports" \
    >>"$SCRATCH/.server.log" 2>&1 &
  server=$!
  for _ in $(seq 300); do [[ -s $SCRATCH/.ports ]] && break; sleep 0.05; done
  [[ -s $SCRATCH/.ports ]] || { echo "the server did not start:"; tail -20 "$SCRATCH/.server.log"; exit 1; }
fi
bash -euo pipefail "$BLOCK"
status=$?
if [[ -n $server ]]; then kill -TERM "$server"; wait "$server"; fi
exit $status
"""


def run_block(block, args, scratch, with_server):
    with tempfile.NamedTemporaryFile("w", suffix=".sh", dir=scratch, delete=False) as f:
        f.write(block)
        path = f.name
    env = dict(os.environ)
    env.pop("NPUZZLE_DATA_DIR", None)
    env.update({"PATH": args.bin + ":" + env.get("PATH", ""), "SCRATCH": scratch, "BLOCK": path,
                "WITH_SERVER": "1" if with_server else "0", "HOME": os.path.join(scratch, "home"),
                "TERM": "dumb"})
    try:
        r = subprocess.run(["unshare", "--net", "--pid", "--mount-proc", "--fork", "--kill-child", "--", "bash", "-c", RUNNER], env=env,
                           capture_output=True, text=True, timeout=BLOCK_SECONDS)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        return -1, f"timed out after {BLOCK_SECONDS} s\n{e.stdout or ''}{e.stderr or ''}"
    finally:
        os.unlink(path)


def scratch_dir(root, bin_dir):
    """A directory that sees the repository's folders (and its build) by
    symbolic links, so examples that write files write them here."""
    scratch = tempfile.mkdtemp(prefix="npuzzle-docs-")
    os.makedirs(os.path.join(scratch, "home"))
    for name in os.listdir(root):
        if name.startswith(".") or name.startswith("build") or name == "npuzzle-data":
            continue
        os.symlink(os.path.join(root, name), os.path.join(scratch, name))
    os.symlink(os.path.dirname(os.path.abspath(bin_dir)), os.path.join(scratch, "build"))
    return scratch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--only", help="one markdown file")
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.root = os.path.abspath(args.root)
    files = [os.path.join(args.root, "README.md")] + sorted(
        os.path.join(args.root, "docs", f) for f in os.listdir(os.path.join(args.root, "docs")) if f.endswith(".md"))
    if args.only:
        files = [f for f in files if f.endswith(args.only)]
    flags = Flags(args.bin)
    failures, ran, checked = [], 0, 0
    namespaces = os.geteuid() == 0
    scratch = scratch_dir(args.root, args.bin)
    for path in files:
        name = os.path.relpath(path, args.root)
        for line, info, text, own in blocks(path):
            where = f"{name}:{line}"
            if info == "sh norun":
                syntax = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
                problems = ([syntax.stderr.strip()] if syntax.returncode else []) + check_flags(text, flags)
                failures += [f"{where}: {p}" for p in problems]
                checked += 1
            elif info == "sh":
                if not namespaces:
                    continue
                status, out = run_block(text, args, scratch, with_server=not own)
                ran += 1
                print(f"{'ok' if status == 0 else 'FAIL'} {where}", flush=True)
                if status != 0:
                    failures.append(f"{where}: exit {status}\n{text}--- output:\n{out[-3000:]}")
            elif info.startswith("sh"):
                failures.append(f"{where}: unknown block kind '{info}' (sh, or sh norun)")
    for f in failures:
        print("FAIL:", f)
    print(f"docs examples: {ran} blocks ran, {checked} checked without running, {len(failures)} failed")
    if failures:
        return 1
    if not namespaces:
        print("skipped the blocks that run: network namespaces need root")
        return SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main())
