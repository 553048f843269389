#!/usr/bin/env bash
# Several "hosts" on one machine: network namespaces joined by veth pairs
# to a bridge in a switch namespace, 10.77.0.0/24, routed nowhere else. The
# coordinator, four workers and the client each get one; driver.py runs
# the scenario from the client's. Needs root; without it (or without
# namespaces) the test is reported as SKIPPED, never as passed.
#   multihost_test.sh BIN_DIR STUBS_DIR DATA_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1 stubs=$2 data=$3
prefix=np$$
skip() {
  echo "=================================================================="
  echo "SKIPPED: multi-host test did not run: $1"
  echo "=================================================================="
  exit 77
}
[[ $(id -u) -eq 0 ]] || skip "it needs root to create network namespaces"
command -v ip >/dev/null || skip "iproute2 (ip) is missing"
ip netns add "$prefix-probe" 2>/tmp/$prefix-netns.err || skip "cannot create a network namespace: $(cat /tmp/$prefix-netns.err)"
ip netns del "$prefix-probe"
rm -f /tmp/$prefix-netns.err

work=$(mktemp -d)
hosts=(coord w1 w2 w3 w4 client)
declare -A address=([coord]=10.77.0.1 [w1]=10.77.0.11 [w2]=10.77.0.12 [w3]=10.77.0.13 [w4]=10.77.0.14
                    [client]=10.77.0.100)
cleanup() {
  for h in "${hosts[@]}" switch; do
    for pid in $(ip netns pids "$prefix-$h" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    ip netns del "$prefix-$h" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT

set -e
ip netns add "$prefix-switch"
ip -n "$prefix-switch" link add br0 type bridge
ip -n "$prefix-switch" link set br0 up
i=0
for h in "${hosts[@]}"; do
  ns=$prefix-$h
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  # Made inside the switch namespace, so no name is taken on this machine.
  ip -n "$prefix-switch" link add "port$i" type veth peer name eth0 netns "$ns"
  ip -n "$prefix-switch" link set "port$i" master br0 up
  ip -n "$ns" addr add "${address[$h]}/24" dev eth0
  ip -n "$ns" link set eth0 up
  i=$((i + 1))
done
set +e
# The hosts see each other and nothing else: no host has a route out.
for h in "${hosts[@]}"; do
  if [[ -n $(ip -n "$prefix-$h" route show default) ]]; then echo "FAIL: $h has a default route"; exit 1; fi
done

ip netns exec "$prefix-client" /usr/bin/python3 "$here/driver.py" --prefix "$prefix" --bin "$bin" --stubs "$stubs" \
  --data "$data" --work "$work"
status=$?
if [[ $status -ne 0 ]]; then
  for log in "$work"/*.log; do echo "--- $log"; tail -n 30 "$log"; done
fi
exit $status
