#!/bin/bash
# builds.sh MVM_A MVM_B [MVM_C]: two or three builds of mvm side by side on
# the operations a start's checks can slow (issue 27's "every benchmark
# within 5%"), MVM_B27_ROUNDS rounds (3) interleaved, the order rotated
# each round (A B C, B C A, C A B) so the box's slow and fast stretches hit
# every build alike. Needs KVM: run it through
# tests/nested/maybe-nested.sh. Each build boots its own guest (its
# build/guest; same kernel) in its own state and template directories.
# Per round and build, one sandbox (256 MiB, --net none):
#   create     `mvm create` returns (cold boot), then the first exec
#   exec       `mvm exec NAME -- true`, MVM_B27_EXECS times (median)
#   cp         `mvm cp` of a 4 MiB file into the guest
#   dirty      the guest writes MVM_B27_DIRTY MiB (non-zero pages) to /tmp
#   checkpoint `mvm checkpoint` (the control: no seal on this path)
#   snapshot   `mvm snapshot NAME DIR` (the VMM writes and digests memory)
#   restore    `mvm restore DIR NEW`, then its first exec
#   tstart     `mvm create --template` (template made from the sandbox),
#              then its first exec; the CLI's instructions of a second
#              start beside the first
# Measures, each said in the output: wall (ms, the box's clock: noisy), the
# CLI's own CPU time (user+sys of the mvm process and the children it
# reaped: the host-side checks, never the guest), the VMM's CPU time spent
# in a snapshot or checkpoint (utime+stime of its process from /proc, before
# and after: 10 ms ticks), and system calls of one exec and one cp
# (strace -f -c: a count, not a timing), the VMM's peak RSS beyond the
# guest's resident RAM after create and one exec, instructions of the exec, cp
# and template start CLI processes (valgrind cachegrind, the CLI alone: a
# proxy for CPU cost, and a count: the same in every round). Raw lines: "B27 SIDE ROUND KEY VALUE".
set -eu
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: $0 MVM_A MVM_B [MVM_C]" >&2; exit 2; }
ROUNDS=${MVM_B27_ROUNDS:-3}
DIRTY=${MVM_B27_DIRTY:-64} EXECS=${MVM_B27_EXECS:-10}
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-b27.XXXXXX")
RAW=${MVM_B27_RAW:-$T/raw}
cleanup() {
	for s in A B C; do
		[ -d "$T/$s/state" ] || continue
		for n in r t2 t b; do MVM_STATE_DIR=$T/$s/state "$T/$s.mvm" rm -f "$n" >/dev/null 2>&1 || true; done
	done
	rm -rf "$T"
}
trap cleanup EXIT
SIDES=""
for s in A B C; do
	[ $# -gt 0 ] || break
	ln -s "$(realpath "$1")" "$T/$s.mvm"
	echo "B27 side $s $(realpath "$1")" | tee -a "$RAW"
	SIDES="$SIDES $s"
	shift
done
head -c $((4 << 20)) /dev/urandom > "$T/cpin"
hz=$(getconf CLK_TCK)
if grep -q -w sha_ni /proc/cpuinfo; then echo "B27 box cpu has sha_ni"; else echo "B27 box cpu has no sha_ni"; fi

ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }
out() { echo "B27 $S $R $1 $2" | tee -a "$RAW"; }
# timed KEY CMD...: wall ms and the CLI's CPU ms of CMD.
timed() {
	local key=$1 t0 t1
	shift
	t0=$(ms)
	if ! /usr/bin/time -o "$T/cpu" -f "%U %S" "$@" >"$T/o" 2>&1; then
		echo "b27: $S round $R: $* failed:" >&2; tail -20 "$T/o" >&2; return 1
	fi
	t1=$(ms)
	out "$key.wall" $((t1 - t0))
	out "$key.cpu" "$(awk '{printf "%d", ($1 + $2) * 1000}' "$T/cpu")"
}
vmm_ticks() { awk '{print $14 + $15}' "/proc/$(cat "$MVM_STATE_DIR/$1/pid")/stat"; }

# one SIDE ROUND
one() {
	S=$1 R=$2
	local m=$T/$S.mvm n t0 v0 i
	export MVM_STATE_DIR=$T/$S/state MVM_TEMPLATE_DIR=$T/$S/tpl
	export MVM_GUEST_DIR
	MVM_GUEST_DIR=$(dirname "$(realpath "$m")")/guest
	mkdir -p "$T/$S"
	t0=$(ms)
	timed create "$m" create b --net none --memory 256M --disk-size 128M
	"$m" exec b -- true
	out create-exec.wall $(($(ms) - t0))
	# The VMM's peak RSS beyond the guest's resident RAM, after one exec
	# (bench-boot's "RSS overhead" of `mvm create` + exec).
	out vmm.rss-overhead-kib "$(python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1] + "/api.sock")
s.sendall(b"{\"op\":\"status\"}\n"); st = json.loads(s.makefile().readline())
hwm = [l for l in open("/proc/%d/status" % st["pid"]) if l.startswith("VmHWM:")][0].split()[1]
print(int(hwm) - int(st["guest_resident_kib"]))' "$MVM_STATE_DIR/b")"
	for i in $(seq "$EXECS"); do
		t0=$(ms); "$m" exec b -- true; echo $(($(ms) - t0)) >> "$T/$S.exec.$R"
	done
	out exec.p50.wall "$(sort -n "$T/$S.exec.$R" | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')"
	strace -f -c -o "$T/st" "$m" exec b -- true
	out exec.syscalls "$(awk '$NF == "total" {print $4 + 0}' "$T/st")"
	valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		--log-file="$T/vg" "$m" exec b -- true
	out exec.cli-instr "$(sed -n 's/.*I *refs: *//p' "$T/vg" | tr -d ,)"
	timed cp "$m" cp "$T/cpin" b:/tmp/cpin
	valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		--log-file="$T/vg" "$m" cp "$T/cpin" b:/tmp/cpin3
	out cp.cli-instr "$(sed -n 's/.*I *refs: *//p' "$T/vg" | tr -d ,)"
	strace -f -c -o "$T/st" "$m" cp "$T/cpin" b:/tmp/cpin2
	out cp.syscalls "$(awk '$NF == "total" {print $4 + 0}' "$T/st")"
	"$m" exec b -- sh -c "mount -o remount,size=90% /tmp && yes mvm | head -c $((DIRTY << 20)) > /tmp/dirty"
	v0=$(vmm_ticks b)
	timed checkpoint "$m" checkpoint b c1
	out checkpoint.vmmcpu $((($(vmm_ticks b) - v0) * 1000 / hz))
	v0=$(vmm_ticks b)
	timed snapshot "$m" snapshot b "$T/$S/snap"
	out snapshot.vmmcpu $((($(vmm_ticks b) - v0) * 1000 / hz))
	out snapshot.memory-allocated-kib "$(du -k "$T/$S/snap/memory" | cut -f1)"
	t0=$(ms)
	timed restore "$m" restore "$T/$S/snap" r
	"$m" exec r -- true
	out restore-exec.wall $(($(ms) - t0))
	"$m" rm -f r >/dev/null
	"$m" template create tpl --from b >/dev/null
	out tpl.layers-allocated-kib "$(du -kc "$MVM_TEMPLATE_DIR"/tpl/layer-* 2>/dev/null | tail -n 1 | cut -f1)"
	t0=$(ms)
	timed tstart "$m" create t --template tpl
	"$m" exec t -- true
	out tstart-exec.wall $(($(ms) - t0))
	# The CLI's instructions of a template start (the CLI alone, not the
	# VMM it execs, nor the fork before that exec): a second sandbox from
	# the template while the first runs, its layers as the first recorded.
	valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		--child-silent-after-fork=yes --log-file="$T/vg" "$m" create t2 --template tpl >/dev/null
	out tstart.cli-instr "$(sed -n 's/.*I *refs: *//p' "$T/vg" | tr -d ,)"
	for n in t2 t b; do "$m" rm -f "$n" >/dev/null; done
	"$m" template rm tpl >/dev/null
	rm -rf "$T/$S/snap"
}

# shellcheck disable=SC2086
set -- $SIDES
for r in $(seq "$ROUNDS"); do
	for s in "$@"; do one "$s" "$r"; done
	set -- "${@:2}" "$1"	# the next round starts with the next build
	echo "b27: round $r done" >&2
done
# Medians per key and build, and each build's over A's.
awk '$1 == "B27" && $2 ~ /^[ABC]$/ { v[$4, $2] = v[$4, $2] " " $5; k[$4] = 1 }
function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n == 0 ? "" : n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function r(x, y) { return x > 0 && y != "" ? sprintf("%.3f", y / x) : "-" }
END { printf "%-30s %9s %9s %9s %6s %6s   %s\n", "key (median)", "A", "B", "C", "B/A", "C/A", "rounds A | B | C"
	for (x in k) { ma = med(v[x, "A"]); mb = med(v[x, "B"]); mc = med(v[x, "C"])
		printf "%-30s %9s %9s %9s %6s %6s  %s |%s |%s\n", x, ma, mb, mc, r(ma, mb), r(ma, mc), v[x, "A"], v[x, "B"], v[x, "C"] } }' "$RAW" | sort
