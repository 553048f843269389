#!/usr/bin/env python3
"""The README's benchmark commands name flags their programs have.

Abseil rejects a misspelt flag (`--time-cap-s` for `--time_cap_s`) only
when the program runs, so each `build/bin/...` line of the README's
Benchmarks block is checked against the program's own flag list.

    readme_commands_test.py --readme README.md --bin build/bin
"""
import argparse
import re
import subprocess
import sys


def benchmark_commands(readme):
    """Each command of the code block under '## Benchmarks', continuations joined."""
    section = readme.split("\n## Benchmarks", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.replace("\\\n", " ").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("build/bin/"):
            commands.append(line)
    return commands


def known_flags(program):
    """The flags `program` lists in its help: Abseil's programs answer
    --helpfull, Google Benchmark's --help."""
    flags = set()
    for ask in ("--helpfull", "--help"):
        out = subprocess.run([program, ask], capture_output=True, text=True, timeout=60)
        flags |= set(re.findall(r"--([A-Za-z0-9_]+)", out.stdout + out.stderr))
    flags -= {"helpfull", "help"}
    return flags


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--readme", required=True)
    parser.add_argument("--bin", required=True)
    args = parser.parse_args()
    with open(args.readme, encoding="utf-8") as f:
        commands = benchmark_commands(f.read())
    if len(commands) < 5:
        print(f"found only {len(commands)} benchmark commands in the README")
        return 1
    failures = []
    for command in commands:
        words = command.split()
        program = args.bin + "/" + words[0][len("build/bin/"):]
        flags = known_flags(program)
        for word in words[1:]:
            if not word.startswith("--"):
                continue
            name = word[2:].split("=", 1)[0]
            if name not in flags:
                failures.append(f"{words[0]}: no flag --{name} (in: {command})")
    for failure in failures:
        print(failure)
    print(f"{len(commands)} commands checked, {len(failures)} unknown flags")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
