#!/bin/sh
# make bench-net: guest download throughput from a test host through mvm
# (virtio-net + libslirp + the policy filter) beside QEMU microvm with
# `-netdev user` (libslirp, no filter): same kernel, same initramfs, same
# guest command, same server, one run. Needs root (netns + veth), which the
# nested box provides.
#
# The test host is a network namespace at 203.0.113.10 behind a veth
# (198.51.100.0/24), serving MVM_BENCH_NET_MB MiB (default 32) with busybox
# httpd. The guest times `wget -O /dev/null` with /proc/uptime; each VMM runs
# MVM_BENCH_RUNS times (default 3), alternating; medians are compared.
# MVM_BENCH_BASELINE=PATH: another mvm build (e.g. the commit before a
# change) runs in each round too, interleaved, so before/after share the
# box's noise.
set -eu
MVM=${MVM:-build/mvm}
GUEST=${MVM_GUEST_DIR:-$(dirname "$MVM")/guest}
MB=${MVM_BENCH_NET_MB:-32}
RUNS=${MVM_BENCH_RUNS:-3}
BASE=${MVM_BENCH_BASELINE:-}
[ "$(id -u)" = 0 ] || { echo "bench-net: needs root (run through tests/nested/maybe-nested.sh)" >&2; exit 2; }
. tests/bench/microvm.lib
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-bench-net.XXXXXX")
NS=mvmb$$ VH=mbh$$ VT=mbt$$
HPID=""
cleanup() {
	set +e
	[ -z "$HPID" ] || kill "$HPID" 2>/dev/null
	testhost_down
	rm -rf "$T"
}
. tests/bench/testhost.lib
trap cleanup EXIT

testhost_up
head -c $((MB * 1048576)) /dev/urandom > "$T/www/big"
echo ready > "$T/www/ready"
ip netns exec "$NS" busybox httpd -f -p 8080 -h "$T/www" &
HPID=$!
i=0
until busybox wget -q -O /dev/null http://203.0.113.10:8080/ready 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "bench-net: http server did not start" >&2; exit 1; }
	sleep 0.2
done

CMD='a=$(cut -d" " -f1 /proc/uptime); wget -q -O /dev/null http://203.0.113.10:8080/big; r=$?; b=$(cut -d" " -f1 /proc/uptime); echo "rc=$r secs=$a $b"'
"$MVM" run --save-initrd "$T/q.cpio" -- sh -c "$CMD"

# secs FILE: download seconds from the guest's line, or fail
secs() {
	line=$(grep -o 'rc=[0-9]* secs=[0-9.]* [0-9.]*' "$1" || true)
	case "$line" in
	rc=0*) echo "$line" | awk '{ split($2, a, "="); printf "%.2f\n", $3 - a[2] }' ;;
	*) echo "bench-net: $2 download failed: $(cat "$1")" >&2; exit 1 ;;
	esac
}

mvm_run() {	# [MVM]
	timeout 600 "${1:-$MVM}" run --allow 203.0.113.10:8080/tcp -- sh -c "$CMD" > "$T/m.out" 2>&1 || true
	secs "$T/m.out" "${1:-mvm}"
}

qemu_run() {
	qemu_microvm 600 "$T/q.out" "$T/q.cpio" -netdev user,id=n0 -device virtio-net-device,netdev=n0
	secs "$T/q.out" qemu
}

m="" q="" z=""
for i in $(seq "$RUNS"); do
	a=$(mvm_run); b=$(qemu_run); c=""
	[ -z "$BASE" ] || c=$(mvm_run "$BASE")
	echo "run $i: mvm ${a}s, qemu ${b}s${BASE:+, baseline ${c}s} for $MB MiB"
	m="$m $a" q="$q $b" z="$z $c"
done
median() { echo "$@" | tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mm=$(median $m) qm=$(median $q)
awk -v mb="$MB" -v m="$mm" -v q="$qm" 'BEGIN {
	printf "\n%-28s %8s %10s\n", "guest download (median)", "seconds", "MiB/s"
	printf "%-28s %8.2f %10.1f\n", "mvm (filtered slirp)", m, mb / m
	printf "%-28s %8.2f %10.1f\n", "qemu microvm -netdev user", q, mb / q
	printf "\nratio mvm/qemu throughput: %.2fx\n", q / m
}'
[ -z "$BASE" ] || awk -v mb="$MB" -v m="$mm" -v z="$(median $z)" 'BEGIN {
	printf "%-28s %8.2f %10.1f\n", "baseline mvm", z, mb / z
	printf "ratio mvm/baseline throughput: %.2fx\n", z / m
}'
