#!/usr/bin/python3
"""End-to-end test of the Python client against a real npuzzle server:
solve (streaming progress, result replays), submit + watch, cancel, and a
rejected job; and against a server with TLS and tokens. Exits non-zero on
the first failure."""

import argparse
import http.client
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from replay_moves import replay  # noqa: E402
from secured_server import secured_server_flags  # noqa: E402

ARGS = None


def start_server(directory, *flags):
    """A server with one local worker; returns the process, its client address and its HTTP port."""
    ports = os.path.join(directory, "ports")
    server = subprocess.Popen(
        [os.path.join(ARGS.bin, "npuzzle-server"), "--listen=127.0.0.1:0", "--worker-listen=127.0.0.1:0",
         f"--data-dir={directory}/data", "--local-workers=1", f"--port-file={ports}", "--metrics-listen=127.0.0.1:0", "--http-listen=",
         "--worker-progress-ms=100", *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 15
    while not os.path.exists(ports) and time.time() < deadline:
        time.sleep(0.02)
    with open(ports) as f:
        fields = f.read().split()
    return server, f"127.0.0.1:{fields[0]}", int(fields[3])


def run_client(address, *args, timeout=60, env=None):
    return subprocess.run([sys.executable, ARGS.client, "--server", address, "--stubs", ARGS.stubs, *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


class PythonClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npuzzle-py-")
        cls.server, cls.address, _ = start_server(cls.dir)

    @classmethod
    def tearDownClass(cls):
        os.killpg(cls.server.pid, signal.SIGKILL)
        cls.server.wait()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def client(self, *args, timeout=60):
        return run_client(self.address, *args, timeout=timeout)

    def test_solve_streams_and_the_answer_replays(self):
        r = self.client("solve", "--board", "8 1 3 4 0 2 7 6 5", "--algorithm", "idastar")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("solved in 14 moves (optimal)", r.stdout)
        moves = r.stdout.split("moves (blank): ")[1].split()[0]
        self.assertEqual(replay([8, 1, 3, 4, 0, 2, 7, 6, 5], 3, 3, moves), [1, 2, 3, 4, 5, 6, 7, 8, 0])

    def test_progress_is_streamed(self):
        r = self.client("--json", "solve", "--board", "14 7 8 2 13 11 10 4 9 12 5 0 3 6 1 15",
                        "--goal-preset", "blank-first", "--algorithm", "idastar", timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(any('"progress"' in line for line in lines), r.stdout[:500])
        self.assertIn('"length": 59', lines[-1])

    def test_submit_then_watch(self):
        r = self.client("submit", "--board", "134 8b5 726", "--goal-preset", "snail")
        self.assertEqual(r.returncode, 0, r.stderr)
        job = r.stdout.strip()
        self.assertTrue(job.startswith("job-"))
        w = self.client("watch", job)
        self.assertEqual(w.returncode, 0, w.stderr)
        self.assertIn("moves (blank): DRUULD", w.stdout)

    def test_list_filters_by_state_and_label(self):
        ids = [self.client("submit", "--board", "8 1 3 4 0 2 7 6 5", "--label", "batch=py").stdout.strip()
               for _ in range(3)]
        for job in ids:
            self.assertEqual(self.client("watch", job).returncode, 0)
        r = self.client("list", "--label", "batch=py", "--state", "done")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual([line.split()[0] for line in lines], list(reversed(ids)))  # newest first
        self.assertTrue(all(line.endswith(" done 3x3 solved") for line in lines), lines)
        self.assertEqual(self.client("list", "--label", "batch=none").stdout, "")
        self.assertEqual(len(self.client("list", "--label", "batch=py", "--limit", "2").stdout.splitlines()), 2)

    def test_cancel_a_running_job(self):
        r = self.client("submit", "--board", "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3", "--goal-preset",
                        "blank-first", "--algorithm", "idastar", "--heuristic", "misplaced")
        job = r.stdout.strip()
        deadline = time.time() + 10
        while "running" not in self.client("get", job).stdout and time.time() < deadline:
            time.sleep(0.05)
        c = self.client("cancel", job)
        self.assertEqual(c.returncode, 0, c.stderr)
        self.assertEqual(c.stdout.strip(), f"{job} cancelled")
        self.assertEqual(self.client("watch", job).returncode, 3)

    def test_bad_jobs_are_refused_with_the_reason(self):
        r = self.client("submit", "--board", "1 2 3 4 5 5 7 8 0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("INVALID_ARGUMENT", r.stderr)
        self.assertIn("duplicate tile 5", r.stderr)


class SecuredServerTest(unittest.TestCase):
    """TLS with a CA made by scripts/make-certs, and a bearer token."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npuzzle-py-tls-")
        cls.ca, flags = secured_server_flags(cls.dir, ARGS.make_certs)
        cls.server, cls.address, cls.http_port = start_server(cls.dir, *flags, "--http-listen=127.0.0.1:0")

    @classmethod
    def tearDownClass(cls):
        os.killpg(cls.server.pid, signal.SIGKILL)
        cls.server.wait()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_tls_and_token_solve(self):
        r = run_client(self.address, "--tls-ca", self.ca, "--token", "team-secret", "solve", "--board",
                       "8 1 3 4 0 2 7 6 5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("solved in 14 moves (optimal)", r.stdout)

    def test_token_from_the_environment(self):
        env = dict(os.environ, NPUZZLE_TOKEN="team-secret")
        r = run_client(self.address, "--tls-ca", self.ca, "submit", "--board", "8 1 3 4 0 2 7 6 5", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_errors_say_which_setting_is_missing_or_wrong(self):
        r = run_client(self.address, "--tls-ca", self.ca, "get", "job-x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("UNAUTHENTICATED", r.stderr)
        self.assertIn("give --token or set NPUZZLE_TOKEN", r.stderr)
        r = run_client(self.address, "--tls-ca", self.ca, "--token", "wrong", "get", "job-x")
        self.assertIn("the token given with --token or NPUZZLE_TOKEN is wrong", r.stderr)
        r = run_client(self.address, "--token", "team-secret", "get", "job-x", timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("give --tls-ca", r.stderr)

    def https(self, method, path, body=None, token="team-secret"):
        """The HTTP/JSON API over HTTPS, verified against the test CA; (status, parsed body or event lines)."""
        context = ssl.create_default_context(cafile=self.ca)
        request = urllib.request.Request(f"https://localhost:{self.http_port}{path}", method=method,
                                         data=None if body is None else json.dumps(body).encode())
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, context=context, timeout=60) as response:
                text = response.read().decode()
                if response.headers["Content-Type"] == "text/event-stream":
                    return response.status, [json.loads(line[6:]) for line in text.splitlines()
                                             if line.startswith("data: ")]
                return response.status, json.loads(text)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read().decode())

    def test_http_api_over_https_with_the_token(self):
        status, job = self.https("POST", "/v1/jobs", {"spec": {"start": {"text": "8 1 3 4 0 2 7 6 5"}}})
        self.assertEqual(status, 200, job)
        self.assertEqual(job["tenant"], "team")
        status, events = self.https("GET", f"/v1/jobs/{job['id']}:watch")
        self.assertEqual(status, 200)
        self.assertEqual(events[-1]["state"]["result"]["length"], 14)
        status, error = self.https("GET", f"/v1/jobs/{job['id']}", token=None)
        self.assertEqual(status, 401)
        self.assertEqual(error["error"]["status"], "UNAUTHENTICATED")
        # Plain HTTP on the HTTPS port gets nowhere.
        with self.assertRaises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
            urllib.request.urlopen(f"http://localhost:{self.http_port}/v1/jobs", timeout=10).read()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--stubs", required=True)
    parser.add_argument("--client", required=True)
    parser.add_argument("--make-certs", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
