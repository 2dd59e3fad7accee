#!/bin/sh
# Run every tests/integration/*.sh (this script excepted) where /dev/kvm works,
# each under a time limit, and end with the plain "N passed, N failed" line.
# Called through tests/nested/maybe-nested.sh by tests/run-integration.sh.
#
# MVM_TEST_PROGRESS=FILE makes the run resumable: each finished test appends
# "name verdict" to FILE, and tests already there are not run again but still
# counted. The nested box sets it so that a box that froze (an emulation
# flake of the outer kernel, not a test result) resumes where it stopped.
set -u
cd "$(dirname "$0")/../.."
[ -c /dev/kvm ] || { echo "run-all: /dev/kvm missing: refusing to pass" >&2; exit 2; }
limit=${MVM_TEST_TIMEOUT:-600}
filter=${MVM_TEST_FILTER:-}
progress=${MVM_TEST_PROGRESS:-/dev/null}
pass=0 failed=0 skipped=0 failures=""
# Everything in the emulated box runs tens of times slower than on hardware
# KVM: a guest busy with Chromium can take longer than the verbs' 10 s to
# open an agent stream there (tests/nested/README.md).
if [ "${MVM_IN_NESTED_BOX:-}" = 1 ]; then
	export MVM_AGENT_TIMEOUT="${MVM_AGENT_TIMEOUT:-60}"
fi

# Soft lockups and RCU stalls the nested box's own kernel logged so far: an
# emulation flake of the outer QEMU (tests/nested/README.md), not a result of
# ours. Outside the box (real KVM) there is nothing to count.
box_stalls() {
	[ "${MVM_IN_NESTED_BOX:-}" = 1 ] || { echo 0; return; }
	dmesg 2>/dev/null | grep -cE 'soft lockup|rcu.*(stall|detected stalls)|hung_task' || true
}

# What the kernel said about crashes and kills while a test ran: a process
# killed from outside (the OOM killer, a signal) leaves no line of its own.
kernel_lines() { dmesg 2>/dev/null | wc -l; }
kernel_news() {
	dmesg 2>/dev/null | tail -n "+$(($1 + 1))" |
		grep -E 'segfault|traps:|general protection|invalid opcode|[Oo]ut of memory|oom-kill|Killed process|audit.*(seccomp|SECCOMP)' |
		tail -10 | sed 's/^/    | kernel: /'
}

# box_flake STATUS NAME STALLS_BEFORE: why a failed test is an emulation
# flake of the nested box rather than a result (empty: it is a result).
# The box kernel stalled while the test ran, so every timing inside was off;
# or a guest CPU triple-faulted or a guest kernel stalled: under nested KVM
# on an emulated CPU (tests/nested/README.md) that happens in about one in
# three Chromium starts on a bad day, and never on hardware KVM, where it
# stays a failure. Such a test runs again, at most twice more; the last
# verdict stands.
box_flake() {
	[ "$1" != 0 ] && [ "$1" != 77 ] && [ "${MVM_IN_NESTED_BOX:-}" = 1 ] || return 0
	if [ "$(box_stalls)" != "$3" ]; then
		echo "the nested box's kernel reported a stall during it"
	elif grep -q 'GUEST-TRIPLE-FAULT' "/tmp/it-$2.log"; then
		echo "a guest vCPU triple-faulted in the emulated box"
	elif grep -q 'GUEST-STALL' "/tmp/it-$2.log"; then
		echo "a guest kernel reported a stall in the emulated box"
	fi
}

run_one() { timeout -k 10 "$limit" sh "$1" > "/tmp/it-$2.log" 2>&1; } # script name

tally() { # verdict name
	case $1 in
	PASS) pass=$((pass + 1)) ;;
	SKIP) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)); failures="$failures $2" ;;
	esac
}
count() { tally "$1" "$2"; echo "$2 $1" >>"$progress"; }

for t in tests/integration/*.sh; do
	name=$(basename "$t" .sh)
	case "$name" in run-all|lib) continue ;; esac
	if [ -n "$filter" ] && ! echo "$name" | grep -Eq "$filter"; then continue; fi
	done_as=$(sed -n "s/^$name \([A-Z]*\)\$/\1/p" "$progress" 2>/dev/null | tail -1)
	if [ -n "$done_as" ]; then
		tally "$done_as" "$name"
		continue
	fi
	start=$(date +%s)
	stalls=$(box_stalls)
	klines=$(kernel_lines)
	run_one "$t" "$name"; rc=$?
	tries=1
	while why=$(box_flake "$rc" "$name" "$stalls") && [ -n "$why" ] && [ $tries -le 2 ]; do
		echo "RETRY $name: $why (status $rc); attempt $tries ended:"
		sed 's/^/    | /' "/tmp/it-$name.log" | tail -12
		stalls=$(box_stalls)
		run_one "$t" "$name"; rc=$?
		tries=$((tries + 1))
	done
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) echo "PASS  $name (${secs}s)"; count PASS "$name" ;;
	77) echo "SKIP  $name: $(tail -1 "/tmp/it-$name.log")"; count SKIP "$name" ;;
	*)
		[ $rc = 124 ] && echo "FAIL  $name: timed out after ${limit}s" || echo "FAIL  $name (status $rc, ${secs}s)"
		sed 's/^/    | /' "/tmp/it-$name.log" | tail -40
		kernel_news "$klines"
		count FAIL "$name"
		;;
	esac
done
echo
[ -z "$failures" ] || echo "failed:$failures"
echo "integration: $pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$pass" -gt 0 ]
