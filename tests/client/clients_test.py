#!/usr/bin/python3
"""The Go and Node.js clients end to end: the same checks against a real
server with a local worker on loopback, run once per client.

    clients_test.py --bin BUILD/bin --make-certs scripts/make-certs --client "BUILD/bin/npuzzle-go"
    clients_test.py --bin BUILD/bin --make-certs scripts/make-certs --client "node client/node/npuzzle.mjs"

Both clients take the same commands and flags, so one test serves both: a
solve whose moves replay to the goal, a watched job's progress events, a
cancel, a list with a label filter, and a non-zero exit for an unknown job;
then TLS and a bearer token against a secured server.
"""

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from replay_moves import replay  # noqa: E402
from secured_server import secured_server_flags  # noqa: E402

ARGS = None
# Korf's first 15-puzzle instance with the weakest heuristic: runs for hours.
LONG_BOARD = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3"


def start_server(directory, *flags):
    """A server with one local worker; returns the process and its client address."""
    ports = os.path.join(directory, "ports")
    server = subprocess.Popen(
        [os.path.join(ARGS.bin, "npuzzle-server"), "--listen=127.0.0.1:0", "--worker-listen=127.0.0.1:0",
         f"--data-dir={directory}/data", "--local-workers=1", f"--port-file={ports}", "--metrics-listen=",
         "--http-listen=", "--worker-progress-ms=100", *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 15
    while not os.path.exists(ports) and time.time() < deadline:
        time.sleep(0.02)
    with open(ports) as f:
        return server, f"127.0.0.1:{f.read().split()[0]}"


class ServerTestCase(unittest.TestCase):
    """One server for the class; the client's command line built for it."""
    server_flags = ()

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npuzzle-clients-")
        cls.prepare()
        cls.server, cls.address = start_server(cls.dir, *cls.server_flags)

    @classmethod
    def prepare(cls):
        pass

    @classmethod
    def tearDownClass(cls):
        os.killpg(cls.server.pid, signal.SIGKILL)
        cls.server.wait()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def command(self, *args, json_output=False, security=()):
        return [*shlex.split(ARGS.client), "--server", self.address, *security,
                *(["--json"] if json_output else []), *args]

    def run_client(self, *args, json_output=False, timeout=60, security=(), env=None):
        return subprocess.run(self.command(*args, json_output=json_output, security=security), capture_output=True,
                              text=True, timeout=timeout, env=env)


class ClientTest(ServerTestCase):
    @classmethod
    def prepare(cls):
        # Labels unique to this run, so the list checks see only its jobs.
        cls.team = f"t{uuid.uuid4().hex[:8]}"

    def test_solve_and_the_moves_replay(self):
        board = [8, 6, 7, 2, 5, 4, 3, 0, 1]
        r = self.run_client("solve", "--board", " ".join(map(str, board)), "--algorithm", "idastar")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("solved in 31 moves (optimal) with idastar + manhattan", r.stdout)
        moves = next(line for line in r.stdout.splitlines() if line.startswith("moves (blank): ")).split(": ")[1]
        self.assertEqual(len(moves), 31)
        self.assertEqual(replay(board, 3, 3, moves), [1, 2, 3, 4, 5, 6, 7, 8, 0])

    def test_solve_json_ends_with_the_result(self):
        r = self.run_client("solve", "--board", "1 2 3 4 5 6 0 7 8", json_output=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        last = json.loads(r.stdout.splitlines()[-1])
        self.assertEqual(last["state"]["state"], "JOB_STATE_DONE")
        self.assertEqual(last["state"]["result"]["moves"], "RR")

    def test_watch_shows_progress_and_cancel_stops_the_job(self):
        r = self.run_client("submit", "--board", LONG_BOARD, "--goal-preset", "blank-first", "--algorithm", "idastar",
                            "--heuristic", "misplaced", "--label", f"team={self.team}", "--label", "kind=long")
        self.assertEqual(r.returncode, 0, r.stderr)
        job_id = r.stdout.strip()
        watcher = subprocess.Popen(self.command("watch", job_id, json_output=True), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            progress = 0
            deadline = time.time() + 30
            while progress < 2 and time.time() < deadline:
                event = json.loads(watcher.stdout.readline())
                progress += "progress" in event and int(event["progress"].get("expanded", "0")) > 0
            self.assertEqual(progress, 2, "two progress events with expanded states")
            cancelled = self.run_client("cancel", job_id)
            self.assertEqual(cancelled.returncode, 0, cancelled.stderr)
            self.assertEqual(cancelled.stdout.strip(), f"{job_id} cancelled")
            rest, _ = watcher.communicate(timeout=30)
        finally:
            watcher.kill()
        last = json.loads(rest.splitlines()[-1])
        self.assertEqual(last["state"]["state"], "JOB_STATE_CANCELLED")
        self.assertEqual(watcher.returncode, 3, "a job that ends without an answer")

    def test_list_filters_by_label(self):
        ids = []
        for board in ("1 2 3 4 5 6 7 0 8", "1 2 3 4 5 0 7 8 6"):
            r = self.run_client("submit", "--board", board, "--label", f"team={self.team}", "--label", "kind=short")
            self.assertEqual(r.returncode, 0, r.stderr)
            ids.append(r.stdout.strip())
        r = self.run_client("submit", "--board", "1 2 3 4 5 6 7 0 8", "--label", "team=someone-else")
        self.assertEqual(r.returncode, 0, r.stderr)
        for job_id in ids:
            self.assertEqual(self.run_client("watch", job_id).returncode, 0)
        r = self.run_client("list", "--label", f"team={self.team}", "--label", "kind=short")
        self.assertEqual(r.returncode, 0, r.stderr)
        listed = [line.split()[0] for line in r.stdout.splitlines()]
        self.assertEqual(sorted(listed), sorted(ids))
        self.assertTrue(all(line.split()[1:] == ["done", "solved"] for line in r.stdout.splitlines()), r.stdout)
        r = self.run_client("list", "--label", f"team={self.team}", "--state", "running", "--label", "kind=short")
        self.assertEqual(r.stdout.strip(), "")

    def test_unknown_job_is_a_clear_error(self):
        for command in ("get", "watch", "cancel"):
            r = self.run_client(command, "job-does-not-exist")
            self.assertEqual(r.returncode, 2, (command, r.stdout, r.stderr))
            self.assertIn("NOT_FOUND: no job with id 'job-does-not-exist'", r.stderr)

    def test_bad_input_is_refused_with_the_reason(self):
        r = self.run_client("submit", "--board", "1 1 2 3 4 5 6 7 0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("INVALID_ARGUMENT: start: duplicate tile 1", r.stderr)
        r = self.run_client("list", "--state", "finished")
        self.assertEqual(r.returncode, 2)
        self.assertIn('state "finished" is not one of queued, running, done, failed, cancelled', r.stderr)
        r = self.run_client("submit", "--board", "1 2 3 4 5 6 7 8 0", "--label", "nolabel")
        self.assertEqual(r.returncode, 2)
        self.assertIn('label "nolabel" is not KEY=VALUE', r.stderr)


class SecuredServerTest(ServerTestCase):
    """TLS with a CA made by scripts/make-certs, and a bearer token."""

    @classmethod
    def prepare(cls):
        cls.ca, cls.server_flags = secured_server_flags(cls.dir, ARGS.make_certs)

    def test_tls_and_a_token(self):
        r = self.run_client("solve", "--board", "8 1 3 4 0 2 7 6 5",
                            security=("--tls-ca", self.ca, "--token", "team-secret"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("solved in 14 moves (optimal)", r.stdout)

    def test_the_token_from_the_environment(self):
        env = dict(os.environ, NPUZZLE_TOKEN="team-secret")
        r = self.run_client("list", security=("--tls-ca", self.ca), env=env)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_errors_say_which_setting_is_missing(self):
        env = {k: v for k, v in os.environ.items() if k != "NPUZZLE_TOKEN"}
        r = self.run_client("get", "job-x", security=("--tls-ca", self.ca), env=env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("UNAUTHENTICATED", r.stderr)
        self.assertIn("the server wants a token", r.stderr)
        r = self.run_client("get", "job-x", security=("--tls-ca", self.ca, "--token", "wrong"), env=env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("is wrong", r.stderr)
        r = self.run_client("get", "job-x", security=("--token", "team-secret"), env=env, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("give", r.stderr)
        self.assertIn("tls-ca", r.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--client", required=True, help="the client's command line, before its flags")
    parser.add_argument("--make-certs", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
