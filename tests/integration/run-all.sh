#!/bin/sh
# Run every tests/integration/*.sh (this script excepted) where /dev/kvm works,
# each under a time limit; end with summary.sh's report (each test, its
# verdict, its duration, its attempts and why it was retried, then the
# "integration: N passed, N failed" line that scripts rely on).
# Called through tests/nested/maybe-nested.sh by tests/run-integration.sh.
#
# MVM_TEST_PROGRESS=FILE makes the run resumable: each finished test appends
# "name verdict" to FILE, and tests already there are not run again but still
# counted. The nested box sets it so that a box that froze (an emulation
# flake of the outer kernel, not a test result) resumes where it stopped.
# Its lines are "name verdict seconds attempts [retry reasons]".
#
# run-all.sh --list prints the names of the tests it would run (the filter
# applied), one per line, and runs nothing: the box runner shards by it.
set -u
cd "$(dirname "$0")/../.."
filter=${MVM_TEST_FILTER:-}
# tests: every test's name, in the order they run (summary.sh is no test).
tests() {
	for t in tests/integration/*.sh; do
		name=$(basename "$t" .sh)
		case "$name" in run-all | lib | summary) continue ;; esac
		if [ -n "$filter" ] && ! echo "$name" | grep -Eq "$filter"; then continue; fi
		echo "$name"
	done
}
if [ "${1:-}" = --list ]; then tests; exit 0; fi
[ -c /dev/kvm ] || { echo "run-all: /dev/kvm missing: refusing to pass" >&2; exit 2; }
limit=${MVM_TEST_TIMEOUT:-600}
progress=${MVM_TEST_PROGRESS:-/dev/null}
running=${MVM_TEST_PROGRESS:+$MVM_TEST_PROGRESS.running}	# the test in flight
sick=${MVM_TEST_PROGRESS:+$MVM_TEST_PROGRESS.sick}	# why the last box gave up
# The previous box asked for a fresh one (box_sick below): the test it was
# running when it did runs again here, and the table gives the reason.
sick_why=""
if [ -n "$sick" ] && [ -s "$sick" ]; then sick_why=$(cat "$sick"); fi
[ -z "$sick" ] || rm -f "$sick"
rows=$(mktemp) && trap 'rm -f "$rows"' EXIT
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

# Oopses of the nested box's own kernel so far. Its 6.1 kernel, running
# nested SVM on QEMU's emulated CPU, now and then overflows a kernel stack
# in a page-fault loop while a VMM task runs ("TASK stack guard page was
# hit", tests/nested/README.md): the task dies, the guest it ran freezes,
# and the box often panics a little later. Not a result of ours.
box_oopses() {
	[ "${MVM_IN_NESTED_BOX:-}" = 1 ] || { echo 0; return; }
	dmesg 2>/dev/null | grep -cE 'BUG: |Oops|stack guard page|double fault' || true
}

# What the kernel said about crashes and kills while a test ran: a process
# killed from outside (the OOM killer, a signal) leaves no line of its own.
kernel_lines() { dmesg 2>/dev/null | wc -l; }
kernel_news() {
	dmesg 2>/dev/null | tail -n "+$(($1 + 1))" |
		grep -E 'BUG: |Oops|stack guard page|segfault|traps:|general protection|invalid opcode|[Oo]ut of memory|oom-kill|Killed process|audit.*(seccomp|SECCOMP)' |
		tail -10 | sed 's/^/    | kernel: /'
}

# box_sick STALLS_BEFORE OOPSES_BEFORE: why the box's own kernel can no longer
# be trusted (empty: it can). A soft lockup, an RCU stall or an oops of the
# box kernel leaves a task stuck inside it: CI saw `mvm` spin in the box
# kernel for 560 s after its test was killed, and every later test bed fail
# to come up in that box. Only inside a resumable box (MVM_TEST_PROGRESS):
# there a fresh box is cheap, and box.sh boots one.
box_sick() {
	[ -n "$sick" ] || return 0
	if [ "$(box_stalls)" != "$1" ]; then
		echo "the nested box's kernel reported a stall during it"
	elif [ "$(box_oopses)" != "$2" ]; then
		echo "the nested box's own kernel oopsed during it"
	fi
}

# leave_box WHY: ask box.sh for a fresh box (status 75 with the reason in
# the .sick file); the test named in .running, if unfinished, runs there.
leave_box() {
	echo "$1" >"$sick"
	echo "SICK BOX: $1; asking for a fresh box"
	dmesg 2>/dev/null | grep -E -m 8 -A 2 'soft lockup|rcu.*stall|hung_task|BUG: |Oops' | sed 's/^/    | kernel: /'
	exit 75
}

# box_flake and guest_cause (what a failed test's log names): flake.lib.
. tests/integration/flake.lib

# run_one SCRIPT NAME: its status; 124 when the limit ended it, even when
# its TERM handling outlived the grace period and KILL did (137).
run_one() {
	t1=$(date +%s) st=0
	timeout -k 20 "$limit" sh "$1" > "/tmp/it-$2.log" 2>&1 || st=$?
	[ "$st" = 137 ] && [ $(( $(date +%s) - t1 )) -ge "$limit" ] && st=124
	return "$st"
}

# row NAME VERDICT SECONDS ATTEMPTS [REASONS]: one line of the final table.
row() { echo "$*" >>"$rows"; }
count() { # verdict name seconds attempts reasons
	row "$2" "$1" "$3" "$4" "$5"
	echo "$2 $1 $3 $4 $5" >>"$progress"
}

for name in $(tests); do
	t=tests/integration/$name.sh
	done_line=$(grep "^$name [A-Z]" "$progress" 2>/dev/null | tail -1)
	if [ -n "$done_line" ]; then	# finished before the box froze: as it was
		echo "$done_line" >>"$rows"
		continue
	fi
	start=$(date +%s)
	tries=1 reasons="" flakes=0
	# The box froze (or panicked) while this test ran: a fresh box runs it
	# again, and the table says so.
	if [ -n "$running" ] && [ "$(cat "$running" 2>/dev/null)" = "$name" ]; then
		tries=2 reasons=${sick_why:-"the nested box froze during it"}
	fi
	[ -z "$running" ] || echo "$name" >"$running"
	stalls=$(box_stalls) oopses=$(box_oopses)
	klines=$(kernel_lines)
	run_one "$t" "$name"; rc=$?
	# A failed test in a box whose kernel stalled or oopsed: rerun it in a
	# fresh box rather than in this one.
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		why=$(box_sick "$stalls" "$oopses")
		if [ -n "$why" ]; then
			sed 's/^/    | /' "/tmp/it-$name.log" | tail -12
			kernel_news "$klines"
			leave_box "$why"
		fi
	fi
	# At most two reruns for what box_flake names; a rerun in a fresh box
	# after a freeze (above) is the box's and does not use them up.
	while why=$(box_flake "$rc" "/tmp/it-$name.log" "$stalls" "$oopses") && [ -n "$why" ] && [ $flakes -lt 2 ]; do
		retry_again "$reasons" "$why" || break
		flakes=$((flakes + 1))
		echo "RETRY $name: $why (status $rc); attempt $tries ended:"
		reasons="${reasons:+$reasons; }$why"
		sed 's/^/    | /' "/tmp/it-$name.log" | tail -12
		kernel_news "$klines"
		stalls=$(box_stalls) oopses=$(box_oopses) klines=$(kernel_lines)
		run_one "$t" "$name"; rc=$?
		tries=$((tries + 1))
	done
	secs=$(( $(date +%s) - start ))	# every attempt's, for the table
	case $rc in
	0) echo "PASS  $name (${secs}s)"; count PASS "$name" "$secs" "$tries" "$reasons" ;;
	77) echo "SKIP  $name: $(tail -1 "/tmp/it-$name.log")"; count SKIP "$name" "$secs" "$tries" "$reasons" ;;
	*)
		cause=$(guest_cause "/tmp/it-$name.log")	# named before a time-out
		case $rc in
		124) echo "FAIL  $name: timed out after ${limit}s${cause:+: $cause}" ;;
		*) echo "FAIL  $name (status $rc, ${secs}s)${cause:+: $cause}" ;;
		esac
		sed 's/^/    | /' "/tmp/it-$name.log" | tail -40
		kernel_news "$klines"
		count FAIL "$name" "$secs" "$tries" "$reasons"
		;;
	esac
	# It passed (or was retried in place) while the box kernel stalled:
	# its verdict stands, the next test gets a fresh box.
	why=$(box_sick "$stalls" "$oopses")
	[ -z "$why" ] || leave_box "$why (after $name)"
done
# The box runner (tests/nested/shards.sh) merges several boxes' rows into
# one report: MVM_TEST_ROWS is where this box's go (on the shared checkout).
[ -z "${MVM_TEST_ROWS:-}" ] || cp "$rows" "$MVM_TEST_ROWS"
sh tests/integration/summary.sh "$rows"
