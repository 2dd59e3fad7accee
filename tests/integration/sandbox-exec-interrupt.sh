#!/bin/sh
# Ctrl-C on mvm exec: the first is forwarded to the guest command, a second
# detaches. Synchronised on markers the guest command prints, never on sleeps.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

sb_create intr

# wait_for FILE TEXT: until the guest command printed TEXT (deadline 120 s);
# at once when the exec printing it ($pid) has ended without it (issue 26).
wait_for() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 1200 ] || fail "no '$2' in $1: $(cat "$1")"
		{ [ -e "/proc/$pid" ] && ! grep -q ") Z " "/proc/$pid/stat" 2>/dev/null; } || grep -q "$2" "$1" ||
			fail "the exec ended without printing '$2': $(cat "$1" "${1%o?}e${1##*o}" 2>/dev/null)"
		sleep 0.1
	done
}

# wait_exit PID: its status in $st; fail if it has not exited within 120 s.
wait_exit() {
	( sleep 120 && kill -KILL "$1" ) </dev/null >/dev/null 2>&1 &
	wd=$!
	st=0
	wait "$1" || st=$?
	kill "$wd" 2>/dev/null || true
	[ "$st" != 137 ] || fail "mvm exec did not exit after SIGINT"
}

"$MVM" exec intr -- sh -c 'echo ready; exec sleep 1000' > "$T/o1" 2> "$T/e1" &
pid=$!
wait_for "$T/o1" ready
kill -INT "$pid"
wait_exit "$pid"
expect_eq "first Ctrl-C ends the command" 130 "$st"

"$MVM" exec intr -- sh -c 'trap "echo got-int" INT; echo ready; while :; do sleep 1; done' \
	> "$T/o2" 2> "$T/e2" &
pid=$!
wait_for "$T/o2" ready
kill -INT "$pid"
wait_for "$T/o2" got-int
kill -INT "$pid"
wait_exit "$pid"
expect_eq "second Ctrl-C detaches" 130 "$st"
expect_match "detach message" "detached" "$(cat "$T/e2")"
echo "sandbox-exec-interrupt: ok"
