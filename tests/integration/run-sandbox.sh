#!/bin/sh
# `mvm run` is create + exec + rm of an ephemeral sandbox: while the command
# runs, run-PID is a sandbox like any other (listed, reachable by mvm exec);
# create's options work (--copy, --disk-size, --env); when the command ends,
# the sandbox and its state are gone, whatever the command's status.
. tests/integration/lib.sh
export MVM_STATE_DIR="$T/state"

mkdir -p "$T/in/sub"
echo copied-in > "$T/in/sub/f"
run_mvm run --copy "$T/in:/tmp/in" --disk-size 64M -e GREETING=hi -w /tmp -- sh -c '
	cat /tmp/in/sub/f; echo "$GREETING"; pwd
	grep -c " /data " /proc/mounts; echo on-data > /data/f && cat /data/f'
expect_eq "status" 0 "$rc"
expect_eq "copy, env, workdir, /data" "copied-in
hi
/tmp
1
on-data" "$(cat "$T/out")"

# The command waits until a second client reaches its sandbox.
"$MVM" run -- sh -c 'while [ ! -e /tmp/go ]; do sleep 0.1; done; echo released; exit 3' \
	>"$T/bg.out" 2>"$T/bg.err" &
pid=$!
name=run-$pid
i=0
until "$MVM" ls 2>/dev/null | grep -q "^$name  *running"; do
	i=$((i + 1))
	[ $i -lt 600 ] || { kill "$pid"; fail "$name never listed as running: $("$MVM" ls)"; }
	kill -0 "$pid" 2>/dev/null || fail "mvm run ended early: $(cat "$T/bg.err")"
	sleep 0.2
done
[ -f "$MVM_STATE_DIR/$name/config.json" ] || fail "no config.json for $name"
run_mvm exec "$name" -- touch /tmp/go
expect_eq "exec into the run's sandbox" 0 "$rc"
rc=0; wait "$pid" || rc=$?
expect_eq "run status is the command's" 3 "$rc"
expect_eq "run output" released "$(cat "$T/bg.out")"
[ ! -e "$MVM_STATE_DIR/$name" ] || fail "state of $name left behind: $(ls "$MVM_STATE_DIR/$name")"

# A failing boot is an mvm error (125) and leaves no state either.
run_mvm run --cmdline rdinit=/bin/false -- true
expect_eq "failed boot status" 125 "$rc"
[ -z "$(ls "$MVM_STATE_DIR")" ] || fail "state left behind: $(ls "$MVM_STATE_DIR")"

run_mvm run --copy nocolon -- true
expect_eq "bad --copy" 2 "$rc"
echo "run-sandbox: ok"
