#!/bin/sh
# run-beside.sh LOG HOST-CMD MAIN-CMD — `make test`'s two halves at once.
#
# The integration suite (MAIN-CMD) spends most of its time in guest vCPUs:
# inside the nested box on 2 cores, QEMU keeps about one core busy and leaves
# the other mostly idle. The host-side checks (HOST-CMD: unit tests plain and
# under ASan+UBSan, the fuzz smoke run; 10-14 min on 2 cores) fill that idle
# core at low priority instead of running first. A nice of 15 gives them about
# 3% of a core the box wants, so the box is not starved (a starved box stalls,
# and its freezes are what the runner retries). No check in either half
# depends on timing (tests/lint/no-timing.py), only on completion.
#
# HOST-CMD's output goes to LOG, shown in full when it fails and as its last
# lines when it passes; MAIN-CMD's output streams as usual. Both always run to
# the end, so one run reports every failure. Status: 0 only if both passed.
set -u
[ $# -eq 3 ] || { echo "usage: run-beside.sh LOG HOST-CMD MAIN-CMD" >&2; exit 2; }
log=$1 host_cmd=$2 main_cmd=$3
mkdir -p "$(dirname "$log")" || exit 2

start=$(date +%s)
echo "make test: host checks run beside the integration suite (nice 15), log: $log"
# Its own session (setsid execs in place: a background child leads no group),
# so an interrupted `make test` takes the whole tree along.
setsid nice -n 15 sh -c "$host_cmd" > "$log" 2>&1 &
host_pid=$!
trap 'kill -TERM -- -$host_pid 2>/dev/null; exit 130' INT TERM

sh -c "$main_cmd"
main_rc=$?

if kill -0 $host_pid 2>/dev/null; then
	echo "make test: integration done; waiting for the host checks ($log)"
fi
wait $host_pid
host_rc=$?
trap - INT TERM
took=$(( $(date +%s) - start ))

echo "================ host checks (unit, asan, fuzz-quick): $log"
if [ $host_rc -eq 0 ]; then
	tail -n 25 "$log"
else
	cat "$log"
fi
echo "================"
verdict() { [ "$1" -eq 0 ] && echo passed || echo "FAILED (status $1)"; }
echo "make test: host checks $(verdict $host_rc); integration $(verdict $main_rc); ${took}s together"
[ $host_rc -eq 0 ] && [ $main_rc -eq 0 ]
