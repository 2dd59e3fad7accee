#!/bin/sh
# A diagnostic, not part of the suite (it prints durations): counts clean
# and unclean `mvm stop`s (issue 26). Create, then rounds of [API pause,
# resume,] exec, sync, `mvm stop`, `mvm start`, with and without the pause
# in turn; for each stop its status, stderr, its steps (MVM_START_TRACE:
# asked the agent, connected, answered or not, VMM gone) and the console's
# tail, appended to $MVM_REPRO_OUT (build/stop-repro.log: the checkout is
# the box's work share). Run in the box as a test of the suite's runner:
#   cp tests/nested/stop-repro.sh tests/integration/zz-stop-repro.sh
#   MVM_TEST_FILTER='^zz-stop-repro$' MVM_REPRO_ROUNDS=16 \
#     MVM_IMAGE_DIR=$HOME/.local/share/mvm/images tests/run-integration.sh
# (then remove the copy: the suite's no-timing lint refuses it there).
# Issue 26's counts: 11 of 24 stops unclean before the agent's fix (6 of 12
# after a pause, 5 of 12 without), 0 of 16 after; about 3 min of box time.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
OUT=${MVM_REPRO_OUT:-build/stop-repro.log}
R=${MVM_REPRO_ROUNDS:-8}
export MVM_START_TRACE="$T/trace"
say() { echo "$*" >>"$OUT"; echo "$*" >&2; }
now() { date +%s.%N | cut -c1-14; }
api() {
	python3 - "$MVM_STATE_DIR/rep/api.sock" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(('{"op":"%s"}\n' % sys.argv[2]).encode())
print(s.makefile().readline().strip())
PY
}
say "== $(date -u +%FT%TZ) rounds $R agent timeout ${MVM_AGENT_TIMEOUT:-10}"
sb_create rep --disk-size 64M
mkdir -p "$T/tree"; head -c 1000000 /dev/urandom > "$T/tree/blob"
i=0
while [ $i -lt "$R" ]; do
	i=$((i + 1))
	mode=pause; [ $((i % 2)) = 0 ] && mode=plain
	[ $i = 1 ] || { t0=$(now); "$MVM" start rep >/dev/null 2>"$T/serr" || say "start failed: $(cat "$T/serr")"; say "round $i: start $(echo "$(now) - $t0" | bc) s"; }
	"$MVM" cp "$T/tree" rep:/data/ >/dev/null 2>&1 || say "cp failed"
	if [ $mode = pause ]; then
		t0=$(now)
		p=$(api pause); "$MVM" ls --json >/dev/null; r=$(api resume)
		say "round $i: paused $(echo "$(now) - $t0" | bc) s ($p $r)"
	fi
	t0=$(now)
	"$MVM" exec rep -- sh -c 'cat /proc/uptime' >"$T/o" 2>&1
	say "round $i: exec after $(echo "$(now) - $t0" | bc) s: $(cat "$T/o")"
	t0=$(now)
	"$MVM" exec rep -- sh -c 'echo persisted > /data/keep && sync' >/dev/null 2>&1
	say "round $i: exec sync $(echo "$(now) - $t0" | bc) s"
	: >"$T/trace"
	t0=$(now)
	"$MVM" stop rep 2>"$T/err"; rc=$?
	say "round $i ($mode): stop rc $rc $(echo "$(now) - $t0" | bc) s stderr: $(cat "$T/err")"
	awk 'NR == 1 { t = $1 } { printf "    trace +%.3f s %s\n", ($1 - t) / 1e6, substr($0, index($0, $3)) }' "$T/trace" | grep 'stop:' >>"$OUT"
	grep -av 'Unhandled WRMSR' "$MVM_STATE_DIR/rep/console.log" | tail -n 4 | sed 's/^/    console | /' >>"$OUT"
done
"$MVM" rm -f rep >/dev/null 2>&1
say "== done"
