#!/usr/bin/env bash
# Renders every Kustomize overlay with kubectl and validates it (schemas
# and cross-object checks in validate_manifests.mjs), against the flags the
# built programs really have and the metrics a real coordinator exports.
# Then shows the checks can fail: broken copies must be rejected.
#   manifests_test.sh BIN_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=$1

for tool in kubectl node; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/setup installs it)"; exit 1; }
done
# The manifests use current Kustomize fields (labels, patches): Kustomize
# 4.1 or later, which kubectl 1.21 and later carry.
kustomize=$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r major minor <<<"${kustomize:-0 0}"
if ((major < 4 || (major == 4 && minor < 1))); then
  echo "FAIL: kubectl's Kustomize is ${kustomize:-unknown}; the manifests need 4.1 or later (kubectl 1.21+)"
  exit 1
fi
if deprecated=$(grep -rlE '^(bases|patchesStrategicMerge|commonLabels|patchesJson6902|vars):' "$root/deploy/k8s"); then
  echo "FAIL: deprecated Kustomize fields in: $deprecated"
  exit 1
fi
[[ -d $here/node_modules/kubernetes-models ]] || { echo "FAIL: run scripts/setup (npm ci in tests/deploy/k8s)"; exit 1; }

work=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$bin/npuzzle-server" --help >"$work/server-flags.txt"
"$bin/npuzzle-worker" --help >"$work/worker-flags.txt"

"$bin/npuzzle-server" --local-workers=0 --listen=127.0.0.1:0 --worker-listen=127.0.0.1:0 \
  --metrics-listen=127.0.0.1:0 --http-listen= --data-dir="$work/data" --port-file="$work/ports" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do [[ -s $work/ports ]] && break; sleep 0.1; done
read -r _ _ metrics_port _ <"$work/ports"
/usr/bin/python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())" \
  "http://127.0.0.1:$metrics_port/metrics" >"$work/metrics.txt"

validate() {  # overlay manifests
  node "$here/validate_manifests.mjs" --overlay "$1" --manifests "$2" \
    --server-flags "$work/server-flags.txt" --worker-flags "$work/worker-flags.txt" --metrics "$work/metrics.txt"
}

failed=0
for overlay in dev prod keda secure cert-manager shared-tables ha; do
  kubectl kustomize "$root/deploy/k8s/overlays/$overlay" >"$work/$overlay.yaml" 2>"$work/$overlay.err" || {
    echo "FAIL: kubectl kustomize overlays/$overlay"; cat "$work/$overlay.err"; failed=1; continue; }
  validate "$overlay" "$work/$overlay.yaml" || failed=1
done

# Each broken copy must fail, naming what is wrong.
expect_rejected() {  # overlay sed-expression expected-message
  sed -e "$2" "$work/$1.yaml" >"$work/broken.yaml"
  if cmp -s "$work/broken.yaml" "$work/$1.yaml"; then echo "FAIL: mutation '$2' changed nothing"; failed=1; return; fi
  if out=$(validate "$1" "$work/broken.yaml" 2>&1); then
    echo "FAIL: mutation '$2' was accepted"; failed=1
  elif [[ $out != *"$3"* ]]; then
    echo "FAIL: mutation '$2' was rejected without '$3':"; echo "$out"; failed=1
  else
    echo "rejected as expected: $2"
  fi
}
expect_rejected prod 's/npuzzle-coordinator:50052/npuzzle-coordinator:50053/' "is no Service port"
expect_rejected prod 's/NPUZZLE_CONCURRENCY:/NPUZZLE_CONCURENCY:/' "has no flag --concurency"
expect_rejected prod 's/NPUZZLE_DRAIN_GRACE_MS: "25000"/NPUZZLE_DRAIN_GRACE_MS: "60000"/' "does not cover"
expect_rejected prod '0,/readOnlyRootFilesystem: true/s//readOnlyRootFilesystem: false/' "root filesystem is writable"
expect_rejected prod 's/containerPort: 9091/containerPort: metrics/' "must be integer"
expect_rejected prod 's/targetPort: grpc-workers/targetPort: grpc-worker/' "does not declare"
expect_rejected keda 's/npuzzle_queue_depth/npuzzle_queue_length/' "does not export"
expect_rejected secure '0,/readOnly: true/s//readOnly: false/' "not mounted read-only"
expect_rejected secure '/name: NPUZZLE_TLS_CA$/,+1d' "in plaintext"
expect_rejected secure 's/path: \/readyz/path: \/metrics/' "must GET /readyz"
expect_rejected secure '/name: NPUZZLE_AUTH_TOKENS$/,+1d' "NPUZZLE_AUTH_TOKENS is not set"
expect_rejected secure 's/^    - podSelector:$/    - namespaceSelector:/' "other than the workers"
expect_rejected cert-manager 's/^  - npuzzle-coordinator$/  - npuzzle-coordinator-x/' "does not name npuzzle-coordinator"
expect_rejected cert-manager '0,/secretName: npuzzle-worker-tls$/s//secretName: npuzzle-worker-tlz/' "issued by no Certificate"
expect_rejected shared-tables 's/- ReadWriteMany/- ReadWriteOnce/' "not ReadWriteMany"
expect_rejected shared-tables 's/claimName: npuzzle-pdb-tables/claimName: npuzzle-tables/' "does not exist"
# The Compose files, checked the same way (no Docker needed).
validate_compose() {  # file
  node "$here/validate_compose.mjs" --compose "$1" --server-flags "$work/server-flags.txt" \
    --worker-flags "$work/worker-flags.txt"
}
for file in docker-compose.yml docker-compose.ha.yml; do
  validate_compose "$root/deploy/$file" || failed=1
done
compose_rejected() {  # file sed-expression expected-message
  sed -e "$2" "$root/deploy/$1" >"$work/broken-compose.yml"
  if cmp -s "$work/broken-compose.yml" "$root/deploy/$1"; then echo "FAIL: mutation '$2' changed nothing"; failed=1; return; fi
  if out=$(validate_compose "$work/broken-compose.yml" 2>&1); then
    echo "FAIL: mutation '$2' of $1 was accepted"; failed=1
  elif [[ $out != *"$3"* ]]; then
    echo "FAIL: mutation '$2' of $1 was rejected without '$3':"; echo "$out"; failed=1
  else
    echo "rejected as expected: $1: $2"
  fi
}
compose_rejected docker-compose.ha.yml 's/NPUZZLE_ADVERTISE_HOST: coordinator-b/NPUZZLE_ADVERTISE_HOST: coordinator-a/' \
  "not its own name"
compose_rejected docker-compose.ha.yml '0,/aliases: \[coordinator\]/s//aliases: [coord]/' "reaches 2 of 3 coordinators"
compose_rejected docker-compose.ha.yml 's/"50061:50051"/"50051:50051"/' "published twice"
compose_rejected docker-compose.ha.yml 's/NPUZZLE_STANDBY: "true"/NPUZZLE_STANDBY: "false"/' "is not --standby"
compose_rejected docker-compose.yml 's/NPUZZLE_CONCURRENCY/NPUZZLE_CONCURENCY/' "has no flag --concurency"
compose_rejected docker-compose.yml '/- npuzzle-pdb:\/var\/cache\/npuzzle/d' "read-only root filesystem"

expect_rejected ha '/name: NPUZZLE_STANDBY$/,+1d' "are not --standby"
expect_rejected ha 's/fieldPath: status.podIP/fieldPath: status.hostIP/' "is not the pod's IP"
expect_rejected ha 's/replicas: 3/replicas: 1/' "at least two replicas"
expect_rejected ha 's/maxUnavailable: 0/maxUnavailable: 1/' "before its replacement is ready"
expect_rejected ha '0,/path: \/readyz/s//path: \/metrics/' "must GET /readyz"
expect_rejected ha '/^kind: PodDisruptionBudget/,/^kind:/s/name: npuzzle-coordinator$/name: npuzzle-coordinators/' \
  "no PodDisruptionBudget selects the coordinators"
exit $failed
