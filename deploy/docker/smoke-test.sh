#!/usr/bin/env bash
# Runs the image for real: a coordinator (read-only root, data on a volume)
# and two workers, a 31-move 8-puzzle job through the image's own CLI, the
# metrics, then SIGTERM for all with exit code 0 expected. Needs a Docker
# daemon; the test suite does not run it (CI has none).
#   deploy/docker/smoke-test.sh [IMAGE]   (default npuzzle:dev, built first)
set -euo pipefail
cd "$(dirname "$0")/../.."
image=${1:-npuzzle:dev}
[[ $# -gt 0 ]] || docker build --network host -f deploy/docker/Dockerfile -t "$image" .
run=npuzzle-smoke-$$
cleanup() {
  docker rm -f "$run-coord" "$run-w1" "$run-w2" >/dev/null 2>&1 || true
  docker volume rm "$run-data" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# Host networking on unusual loopback ports: no bridge or port mapping needed.
docker volume create "$run-data" >/dev/null
docker run -d --name "$run-coord" --network host --read-only --tmpfs /tmp -v "$run-data:/var/lib/npuzzle" \
  "$image" npuzzle-server --listen=127.0.0.1:50191 --worker-listen=127.0.0.1:50192 \
  --metrics-listen=127.0.0.1:9191 --http-listen=127.0.0.1:8191 --local-workers=0 >/dev/null
for w in w1 w2; do
  docker run -d --name "$run-$w" --network host --read-only --tmpfs /tmp -e NPUZZLE_COORDINATOR=127.0.0.1:50192 \
    -e NPUZZLE_METRICS_LISTEN= -e NPUZZLE_DATA_DIR=/tmp -e NPUZZLE_WORKER_ID="$w" "$image" npuzzle-worker >/dev/null
done
[[ $(docker exec "$run-coord" id -u) != 0 ]] || { echo "FAIL: the image runs as root"; exit 1; }
out=$(docker exec "$run-coord" npuzzle solve --server 127.0.0.1:50191 --board "8 6 7 2 5 4 3 0 1" --algorithm idastar 2>&1)
grep -q "solved in 31 moves (optimal)" <<<"$out" || { echo "FAIL: $out"; exit 1; }
metrics=$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9191/metrics').read().decode())")
grep -q '^npuzzle_workers_connected 2$' <<<"$metrics" || { echo "FAIL: two workers not connected"; exit 1; }
docker stop -t 40 "$run-w1" "$run-w2" "$run-coord" >/dev/null
for c in coord w1 w2; do
  code=$(docker inspect -f '{{.State.ExitCode}}' "$run-$c")
  [[ $code == 0 ]] || { echo "FAIL: $c exited $code after SIGTERM"; docker logs "$run-$c" | tail; exit 1; }
done
echo "image $image: coordinator and workers ran as non-root on a read-only root, solved a job optimally, drained cleanly"
