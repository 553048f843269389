#!/usr/bin/python3
"""The multi-host scenario, run from the client "host" (a network namespace
made by multihost_test.sh). The coordinator and each worker live in their
own namespaces, reached only over the test's bridge. While a batch of jobs
runs: workers are added (scale up), one is drained with SIGTERM (scale
down), every process of another worker's host is killed with SIGKILL, and
the coordinator is killed and restarted. Then every job must have finished
exactly once, with the optimal length and moves that replay, and the
coordinator's metrics must agree. Last, one job is spread over every worker
host and one host is killed mid-threshold.
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "util"))
from replay_moves import replay  # noqa: E402

ARGS = None
COORDINATOR_ADDRESS = "10.77.0.1"
WORKER_ADDRESS = {"w1": "10.77.0.11", "w2": "10.77.0.12", "w3": "10.77.0.13", "w4": "10.77.0.14"}
FINAL_STATES = None  # filled once the stubs are loaded
TIMEOUT_S = 180  # for every job to finish, from submission


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def namespace(host):
    return f"{ARGS.prefix}-{host}"


def spawn(host, argv):
    out = open(os.path.join(ARGS.work, f"{host}.log"), "a")
    return subprocess.Popen(["ip", "netns", "exec", namespace(host), *argv], stdout=out, stderr=subprocess.STDOUT)


def kill_host(host):
    """SIGKILL for every process in the host's namespace, as if it died."""
    pids = subprocess.run(["ip", "netns", "pids", namespace(host)], capture_output=True, text=True).stdout.split()
    for pid in pids:
        os.kill(int(pid), signal.SIGKILL)
    return len(pids)


def start_coordinator():
    ports = os.path.join(ARGS.work, "ports")
    if os.path.exists(ports):
        os.remove(ports)
    process = spawn("coord", [
        os.path.join(ARGS.bin, "npuzzle-server"), f"--listen={COORDINATOR_ADDRESS}:50051",
        f"--worker-listen={COORDINATOR_ADDRESS}:50052", f"--metrics-listen={COORDINATOR_ADDRESS}:9090",
        f"--http-listen={COORDINATOR_ADDRESS}:8080",
        "--local-workers=0", f"--data-dir={ARGS.work}/coordinator", f"--port-file={ports}",
        "--lease-timeout-ms=3000", "--recovery-grace-ms=2000", "--drain-grace-ms=2000"])
    deadline = time.time() + 15
    while not os.path.exists(ports) and time.time() < deadline:
        time.sleep(0.05)
    assert os.path.exists(ports), "the coordinator did not start"
    return process


def start_worker(host):
    return spawn(host, [
        os.path.join(ARGS.bin, "npuzzle-worker"), f"--coordinator={COORDINATOR_ADDRESS}:50052",
        f"--worker-id={host}", "--max-search-threads=1", "--heartbeat-ms=300", "--drain-grace-ms=300",
        f"--metrics-listen={WORKER_ADDRESS[host]}:9091", f"--data-dir={ARGS.work}/{host}"])


def load_cases(pb):
    """(spec, optimal length) pairs: the 3x3 seed cases with two algorithms,
    and 15-puzzle instances of one to three seconds with linear conflict."""
    cases = []
    with open(os.path.join(ARGS.data, "seed-cases.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            dims, start, goal, length = [part.strip() for part in line.split("|")[:4]]
            rows, cols = map(int, dims.split())
            for algorithm in ("astar", "idastar"):
                spec = pb.JobSpec(algorithm=algorithm, heuristic="manhattan")
                spec.start.rows, spec.start.cols, spec.start.text = rows, cols, start
                spec.goal.rows, spec.goal.cols, spec.goal.text = rows, cols, goal
                cases.append((spec, int(length)))
    # Longer jobs first, so the workers are busy when things break, and two
    # of the longest last, so there is still work when w2 is drained.
    first = {1, 2, 4, 5, 6, 8, 11, 16, 18, 20, 21, 24, 25}
    last = {10, 14}
    with open(os.path.join(ARGS.data, "korf100.txt")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.split()
            if int(fields[0]) in first | last:
                spec = pb.JobSpec(algorithm="idastar", heuristic="linear-conflict", goal_preset="blank-first",
                                  threads=1, priority=1 if int(fields[0]) in first else -1)
                spec.start.text = " ".join(fields[2:])
                cases.append((spec, int(fields[1])))
    return cases


class Watcher(threading.Thread):
    """Follows one job to its final event, re-attaching whenever the
    coordinator goes away; records every final event it is sent."""

    def __init__(self, stub, pb, job_id, deadline):
        super().__init__(daemon=True)
        self.stub, self.pb, self.job_id, self.deadline = stub, pb, job_id, deadline
        self.finals = []
        self.reattached = 0

    def run(self):
        while time.time() < self.deadline:
            try:
                for event in self.stub.WatchJob(self.pb.WatchJobRequest(job_id=self.job_id),
                                                timeout=max(1, self.deadline - time.time())):
                    if event.HasField("state") and event.state.state in FINAL_STATES:
                        self.finals.append(event.state)
                        return
            except Exception:  # the coordinator restarting: attach again
                pass
            self.reattached += 1
            time.sleep(0.2)


def scrape(address):
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
        return r.read().decode()


def metric(text, series):
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None


def wait_for(condition, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def korf_instance(number):
    with open(os.path.join(ARGS.data, "korf100.txt")) as f:
        for line in f:
            fields = line.split()
            if not line.startswith("#") and int(fields[0]) == number:
                return " ".join(fields[2:]), int(fields[1])
    raise AssertionError(f"no Korf instance {number}")


def split_job_phase(stub, pb, workers):
    """One job spread over every worker host, one of which is killed in the
    middle of a threshold: the job still ends once, optimal, having used
    the hosts that were there. Returns the problems found."""
    for host in ("w1", "w2"):  # back on the hosts that went away
        workers[host] = start_worker(host)
    board, length = korf_instance(17)
    spec = pb.JobSpec(algorithm="idastar", heuristic="manhattan", goal_preset="blank-first", max_workers=4,
                      request_id="multihost-split")
    spec.start.text = board
    job_id = stub.SubmitJob(pb.SubmitJobRequest(spec=spec), timeout=10, wait_for_ready=True).id

    def mid_threshold():
        p = stub.GetJob(pb.GetJobRequest(job_id=job_id), timeout=5).progress
        return p.workers >= 3 and 0 < p.units_done < p.units_total and p.bound >= 60

    wait_for(mid_threshold, 60, "the split job to be mid-threshold on several hosts")
    log(f"split job {job_id}: killed {kill_host('w3')} process(es) on w3 mid-threshold")
    workers.pop("w3").wait()
    watcher = Watcher(stub, pb, job_id, time.time() + TIMEOUT_S)
    watcher.run()
    if len(watcher.finals) != 1:
        return [f"split job {job_id}: {len(watcher.finals)} final events"]
    final = watcher.finals[0]
    problems = []
    if final.state != pb.JOB_STATE_DONE or final.result.length != length:
        problems.append(f"split job {job_id}: ended {pb.JobState.Name(final.state)} {final.result.status} "
                        f"with {final.result.length} moves, optimal is {length}")
    if replay(final.start.tiles, final.start.rows, final.start.cols, final.result.moves) != list(final.goal.tiles):
        problems.append(f"split job {job_id}: moves do not reach the goal")
    if final.result.stats.workers < 3:
        problems.append(f"split job {job_id}: only {final.result.stats.workers} workers took part")
    log(f"split job: {final.result.length} moves over {final.result.stats.workers} workers in "
        f"{final.result.stats.work_units} units")
    return problems


def main():
    global ARGS, FINAL_STATES
    parser = argparse.ArgumentParser()
    for flag in ("--prefix", "--bin", "--stubs", "--data", "--work"):
        parser.add_argument(flag, required=True)
    ARGS = parser.parse_args()
    sys.path.insert(0, ARGS.stubs)
    import grpc
    from npuzzle.v1 import solver_pb2 as pb, solver_pb2_grpc as rpc
    FINAL_STATES = {pb.JOB_STATE_DONE, pb.JOB_STATE_FAILED, pb.JOB_STATE_CANCELLED}

    coordinator = start_coordinator()
    workers = {host: start_worker(host) for host in ("w1", "w2")}
    channel = grpc.insecure_channel(f"{COORDINATOR_ADDRESS}:50051")
    stub = rpc.SolverServiceStub(channel)
    grpc.channel_ready_future(channel).result(timeout=15)

    cases = load_cases(pb)
    expected = {}
    for i, (spec, length) in enumerate(cases):
        spec.request_id = f"multihost-{i}"
        job = stub.SubmitJob(pb.SubmitJobRequest(spec=spec), timeout=10, wait_for_ready=True)
        expected[job.id] = length
    log(f"submitted {len(expected)} jobs")
    deadline = time.time() + TIMEOUT_S
    watchers = {job_id: Watcher(stub, pb, job_id, deadline) for job_id in expected}
    for w in watchers.values():
        w.start()

    def running_on(host):
        jobs = [stub.GetJob(pb.GetJobRequest(job_id=j), timeout=5, wait_for_ready=True) for j in expected]
        return [j for j in jobs if j.worker_id == host and j.state == pb.JOB_STATE_RUNNING]

    wait_for(lambda: running_on("w1") and running_on("w2"), 20, "both first workers to run jobs")
    workers["w3"] = start_worker("w3")
    log("scaled up: w3")
    time.sleep(0.5)
    victim_jobs = running_on("w1")
    log(f"killed {kill_host('w1')} process(es) on w1, which ran {[j.id for j in victim_jobs]}")
    workers.pop("w1").wait()
    workers["w4"] = start_worker("w4")
    log("scaled up: w4")
    wait_for(lambda: running_on("w2"), 20, "w2 to run a job")
    drained_jobs = running_on("w2")
    workers["w2"].send_signal(signal.SIGTERM)
    assert workers.pop("w2").wait(timeout=15) == 0, "a drained worker exits 0"
    log(f"scaled down: w2 drained and exited 0, handing back {[j.id for j in drained_jobs]}")
    time.sleep(0.5)
    log(f"killed {kill_host('coord')} coordinator process(es)")
    coordinator.wait()
    coordinator = start_coordinator()
    log("coordinator restarted")

    for w in watchers.values():
        w.join(max(0, deadline - time.time()))
    problems = []
    for job_id, w in watchers.items():
        if len(w.finals) != 1:
            problems.append(f"{job_id}: {len(w.finals)} final events")
            continue
        final = w.finals[0]
        stored = stub.GetJob(pb.GetJobRequest(job_id=job_id), timeout=10)
        if final.state != pb.JOB_STATE_DONE or final.result.status != "solved":
            problems.append(f"{job_id}: ended {pb.JobState.Name(final.state)} {final.result.status} {final.error}")
            continue
        if final.result.length != expected[job_id]:
            problems.append(f"{job_id}: length {final.result.length}, optimal is {expected[job_id]}")
        if replay(final.start.tiles, final.start.rows, final.start.cols, final.result.moves) != list(final.goal.tiles):
            problems.append(f"{job_id}: moves do not reach the goal")
        # One result per job: what the store holds now is what was reported.
        if (stored.state, stored.attempt, stored.worker_id, stored.result.moves) != \
                (final.state, final.attempt, final.worker_id, final.result.moves):
            problems.append(f"{job_id}: the stored result differs from the reported one")
    listed = stub.ListJobs(pb.ListJobsRequest(page_size=1000), timeout=10).jobs
    if sorted(j.id for j in listed) != sorted(expected):
        problems.append(f"the store holds {len(listed)} jobs, not the {len(expected)} submitted")
    retried = [j for j in expected if watchers[j].finals and watchers[j].finals[0].attempt > 1]
    # Each job seen running on a worker as it went away either finished
    # there just before, or ran again: counted as lost after the kill, not
    # counted after the drain.
    for then, host, penalty in [*((j, "w1", 1) for j in victim_jobs), *((j, "w2", 0) for j in drained_jobs)]:
        final = watchers[then.id].finals[0] if watchers[then.id].finals else None
        if final is None or (final.worker_id == host and final.attempt == then.attempt):
            continue
        if final.attempt <= then.attempt or final.lost_attempts != then.lost_attempts + penalty:
            problems.append(f"{then.id}, running on {host} (attempt {then.attempt}, lost {then.lost_attempts}) "
                            f"as it went, ended as attempt {final.attempt}, lost {final.lost_attempts}")

    coordinator_metrics = scrape(f"{COORDINATOR_ADDRESS}:9090")
    done_jobs = metric(coordinator_metrics, 'npuzzle_jobs{state="done"}')
    if done_jobs != len(expected):
        problems.append(f"metrics: npuzzle_jobs done = {done_jobs}, not {len(expected)}")
    if metric(coordinator_metrics, "npuzzle_workers_connected") != len(workers):
        problems.append(f"metrics: {metric(coordinator_metrics, 'npuzzle_workers_connected')} workers connected")
    finished_by_survivors = sum(
        metric(scrape(f"{WORKER_ADDRESS[h]}:9091"), 'npuzzle_worker_jobs_total{outcome="finished"}') for h in workers)
    finished_here = sum(1 for j in expected if watchers[j].finals and watchers[j].finals[0].worker_id in workers)
    # A survivor may also have finished an attempt the coordinator had
    # already given up on (and ignored), so at least, not exactly.
    if finished_by_survivors < finished_here:
        problems.append(f"the surviving workers count {finished_by_survivors} finished jobs; {finished_here} are theirs")

    log(f"{len(expected)} jobs, {len(retried)} run more than once, "
        f"{sum(w.reattached for w in watchers.values())} watch re-attachments")
    problems += split_job_phase(stub, pb, workers)
    for w in workers.values():
        w.send_signal(signal.SIGTERM)
    coordinator.send_signal(signal.SIGTERM)
    for p in [*workers.values(), coordinator]:
        p.wait(timeout=30)
    if problems:
        for p in problems:
            log(f"PROBLEM: {p}")
        sys.exit(1)
    log("every job finished exactly once with an optimal answer")


if __name__ == "__main__":
    main()
