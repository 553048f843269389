#!/usr/bin/python3
"""A Python client for the npuzzle service: submit a job, stream its
progress, print the result, cancel.

The gRPC stubs are generated at build time (build/python); put that
directory on PYTHONPATH or pass --stubs.

    npuzzle_client.py --server localhost:50051 solve --board "8 1 3 4 0 2 7 6 5"
    npuzzle_client.py --server localhost:50051 submit --board "..." --algorithm idastar
    npuzzle_client.py --server localhost:50051 watch JOB_ID
    npuzzle_client.py --server localhost:50051 cancel JOB_ID
    npuzzle_client.py --server localhost:50051 list --state running --label team=a

A secured server: --tls-ca FILE (the CA that signed its certificate) and
--token TOKEN (or NPUZZLE_TOKEN in the environment).
"""

import argparse
import json
import os
import sys


def load_stubs(stubs_dir):
    if stubs_dir:
        sys.path.insert(0, stubs_dir)
    from npuzzle.v1 import solver_pb2, solver_pb2_grpc  # noqa: E402
    return solver_pb2, solver_pb2_grpc


def state_name(pb, state):
    return pb.JobState.Name(state).removeprefix("JOB_STATE_").lower()


def spec_from_args(pb, args):
    spec = pb.JobSpec(algorithm=args.algorithm, heuristic=args.heuristic,
                      goal_preset=args.goal_preset or "", priority=args.priority)
    spec.start.text = args.board
    for label in args.label:
        key, _, value = label.partition("=")
        spec.labels[key] = value
    if args.goal:
        spec.goal.text = args.goal
    if args.pdb_preset:
        spec.pdb_preset = args.pdb_preset
    if args.max_time_ms:
        spec.limits.max_time_ms = args.max_time_ms
    return spec


def print_result(pb, job):
    if job.state == pb.JOB_STATE_DONE and job.result.status == "solved":
        r = job.result
        print(f"{job.id}: solved in {r.length} moves"
              f"{' (optimal)' if r.optimal else ''} with {r.algorithm} + {r.heuristic}")
        print(f"moves (blank): {r.moves}")
        print(f"tiles moved:   {' '.join(str(t) for t in r.tile_moves)}")
        print(f"expanded {r.stats.expanded}, generated {r.stats.generated}, {r.stats.elapsed_ms:.3f} ms")
    elif job.state == pb.JOB_STATE_FAILED:
        print(f"{job.id}: failed: {job.error}")
    else:
        print(f"{job.id}: {state_name(pb, job.state)}: {job.result.status}")


def follow(pb, events, as_json):
    """Prints a job's events; returns the finished job (or None)."""
    last = None
    for event in events:
        kind = event.WhichOneof("event")
        if as_json:
            from google.protobuf import json_format
            print(json.dumps(json_format.MessageToDict(event, preserving_proto_field_name=True)), flush=True)
        elif kind == "progress":
            p = event.progress
            print(f"progress: {p.expanded} expanded, {p.generated} generated, bound {p.bound}, "
                  f"{p.elapsed_ms:.0f} ms", file=sys.stderr, flush=True)
        else:
            print(f"{event.state.id} {state_name(pb, event.state.state)}", file=sys.stderr, flush=True)
        if kind == "state":
            last = event.state
    return last


def open_channel(grpc, args):
    if not args.tls_ca:
        return grpc.insecure_channel(args.server)
    try:
        with open(args.tls_ca, "rb") as f:
            roots = f.read()
    except OSError as error:
        raise SystemExit(f"npuzzle_client: --tls-ca {args.tls_ca}: {error.strerror}")
    options = [("grpc.ssl_target_name_override", args.tls_server_name)] if args.tls_server_name else []
    return grpc.secure_channel(args.server, grpc.ssl_channel_credentials(root_certificates=roots), options=options)


def hint(grpc, error, args):
    """Which security setting to look at, for errors that come from one."""
    if error.code() == grpc.StatusCode.UNAUTHENTICATED:
        if args.token:
            return " (the token given with --token or NPUZZLE_TOKEN is wrong)"
        return " (the server wants a token: give --token or set NPUZZLE_TOKEN)"
    if error.code() == grpc.StatusCode.UNAVAILABLE:
        details = error.details() or ""
        if "andshake" in details or "certificate" in details or "erification" in details:
            return " (TLS failed: --tls-ca must be the CA that signed the server's certificate)"
        if not args.tls_ca:
            return " (if the server uses TLS, give --tls-ca)"
    return ""


def list_jobs(pb, stub, args, auth):
    """Pages through ListJobs until --limit jobs or the last page."""
    from google.protobuf import json_format
    request = pb.ListJobsRequest(page_size=min(args.limit, 1000))
    request.states.extend(getattr(pb, f"JOB_STATE_{s.upper()}") for s in args.state)
    for label in args.label:
        key, _, value = label.partition("=")
        request.labels[key] = value
    shown = 0
    while shown < args.limit:
        page = stub.ListJobs(request, timeout=30, metadata=auth)
        for job in page.jobs[:args.limit - shown]:
            if args.json:
                print(json.dumps(json_format.MessageToDict(job)))
            else:
                outcome = job.result.status if job.HasField("result") else job.error
                print(f"{job.id} {state_name(pb, job.state)} {job.start.rows}x{job.start.cols} {outcome}".rstrip())
            shown += 1
        if not page.next_page_token:
            break
        request.page_token = page.next_page_token
    return 0


def exit_code(pb, job):
    if job is None or job.state == pb.JOB_STATE_FAILED:
        return 1
    if job.state == pb.JOB_STATE_DONE and job.result.status in ("solved", "unsolvable"):
        return 0
    return 3


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=os.environ.get("NPUZZLE_SERVER", "localhost:50051"))
    parser.add_argument("--stubs", help="directory with the generated npuzzle/v1 stubs")
    parser.add_argument("--json", action="store_true", help="one JSON object per event")
    parser.add_argument("--tls-ca", help="PEM CA that signed the server's certificate (default: plaintext)")
    parser.add_argument("--tls-server-name", help="the name the server's certificate must hold")
    parser.add_argument("--token", default=os.environ.get("NPUZZLE_TOKEN"),
                        help="bearer token (default: $NPUZZLE_TOKEN)")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("solve", "submit"):
        c = commands.add_parser(name)
        c.add_argument("--board", required=True)
        c.add_argument("--goal")
        c.add_argument("--goal-preset")
        c.add_argument("--algorithm", default="auto")
        c.add_argument("--heuristic", default="manhattan")
        c.add_argument("--pdb-preset")
        c.add_argument("--priority", type=int, default=0)
        c.add_argument("--max-time-ms", type=int, default=0)
        c.add_argument("--label", action="append", default=[], help="key=value (repeat for more)")
    for name in ("watch", "get", "cancel"):
        commands.add_parser(name).add_argument("job_id")
    listing = commands.add_parser("list", help="jobs, newest first: one line each (--json: the job)")
    listing.add_argument("--state", action="append", default=[],
                         choices=["queued", "running", "done", "failed", "cancelled"])
    listing.add_argument("--label", action="append", default=[], help="key=value: only jobs with it")
    listing.add_argument("--limit", type=int, default=50, help="at most this many jobs")
    args = parser.parse_args()

    import grpc
    pb, rpc = load_stubs(args.stubs)
    stub = rpc.SolverServiceStub(open_channel(grpc, args))
    auth = [("authorization", f"Bearer {args.token}")] if args.token else []
    try:
        if args.command == "solve":
            job = follow(pb, stub.Solve(pb.SubmitJobRequest(spec=spec_from_args(pb, args)), metadata=auth), args.json)
            if not args.json and job is not None:
                print_result(pb, job)
            return exit_code(pb, job)
        if args.command == "submit":
            job = stub.SubmitJob(pb.SubmitJobRequest(spec=spec_from_args(pb, args)), timeout=30, metadata=auth)
            print(job.id)
            return 0
        if args.command == "watch":
            job = follow(pb, stub.WatchJob(pb.WatchJobRequest(job_id=args.job_id), metadata=auth), args.json)
            if not args.json and job is not None:
                print_result(pb, job)
            return exit_code(pb, job)
        if args.command == "get":
            print_result(pb, stub.GetJob(pb.GetJobRequest(job_id=args.job_id), timeout=30, metadata=auth))
            return 0
        if args.command == "list":
            return list_jobs(pb, stub, args, auth)
        if args.command == "cancel":
            job = stub.CancelJob(pb.CancelJobRequest(job_id=args.job_id), timeout=30, metadata=auth)
            print(f"{job.id} {state_name(pb, job.state)}")
            return 0
    except grpc.RpcError as error:
        print(f"npuzzle_client: {error.code().name}: {error.details()}{hint(grpc, error, args)}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
