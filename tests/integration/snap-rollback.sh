#!/bin/sh
# Checkpoint a sandbox with a running counter process and files; break
# things (change, delete and corrupt files, kill the counter, fill memory);
# roll back -> files byte-identical, the same counter process alive and
# counting on from where it was, the agent answering, the clock stepped to
# the host's. Then several checkpoints: back to an older one, twice to the
# same one, and forward again to one taken after it.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

sb_create snap --disk-size 64M --memory 256M

# On failure: the guest's console and the sandbox's events, then fail.
why() {
	"$MVM" logs snap 2>&1 | grep -v '^\[' | tail -25 >&2
	cp "$MVM_STATE_DIR/snap/console.log" build/snap-rollback-console.log 2>/dev/null || true
	"$MVM" events snap 2>&1 | tail -4 >&2; fail "$1"
}
gexec() { run_mvm exec snap -- sh -c "$1"; [ "$rc" = 0 ] || why "exec '$1' ($rc): $(cat "$T/err")"; }

# A counter that lives on after its exec (own session, no pipes held).
gexec 'setsid sh -c "i=0; while :; do i=\$((i+1)); echo \$i > /tmp/count; sleep 1; done" </dev/null >/dev/null 2>&1 & echo $! > /tmp/counter.pid'
gexec 'mkdir -p /data/d && head -c 300000 /dev/urandom > /data/d/a && echo keep > /data/d/b && head -c 70000 /dev/urandom > /data/d/c'
gexec 'cat /tmp/counter.pid'; pid=$(cat "$T/out")
gexec 'md5sum /data/d/*'; sums0=$(cat "$T/out")
gexec 'cat /tmp/count'; before=$(cat "$T/out")

run_mvm checkpoint snap first
expect_eq "checkpoint" 0 "$rc"
expect_eq "checkpoint prints the tag" "first" "$(cat "$T/out")"

# Break everything.
gexec 'echo changed >> /data/d/a; rm /data/d/b; dd if=/dev/zero of=/data/d/c bs=1k count=8 seek=3 conv=notrunc 2>/dev/null; echo new > /data/d/new; sync'
gexec "kill $pid"
gexec 'head -c 40000000 /dev/urandom > /tmp/fill'
run_mvm exec snap -- kill -0 "$pid"
[ "$rc" != 0 ] || fail "counter still alive after kill"

run_mvm rollback snap first
[ "$rc" = 0 ] || why "rollback ($rc): $(cat "$T/err")"
gexec 'md5sum /data/d/*'
expect_eq "files as at the checkpoint" "$sums0" "$(cat "$T/out")"
gexec 'ls /tmp/fill /data/d/new 2>/dev/null | wc -l'
expect_eq "later files gone" "0" "$(cat "$T/out")"
gexec "kill -0 $pid && cat /tmp/count"
after=$(cat "$T/out")
[ "$after" -ge "$before" ] && [ "$after" -lt $((before + 15)) ] ||
	fail "counter after rollback: $after (was $before before the checkpoint)"
i=0
while gexec 'cat /tmp/count' && [ "$(cat "$T/out")" -le "$after" ]; do
	i=$((i + 1)); [ $i -lt 30 ] || fail "counter does not go on after rollback"
	sleep 1
done
# The guest's clock was set from the host's: read between two host readings
# h0 <= h1, it lies within h0-1 .. h1+1 whatever the exec costs.
h0=$(date +%s); gexec 'date +%s'; g=$(cat "$T/out"); h1=$(date +%s)
[ "$g" -ge $((h0 - 1)) ] && [ "$g" -le $((h1 + 1)) ] || fail "guest clock $g, host $h0..$h1 after rollback"

# Several checkpoints.
gexec 'echo two > /data/d/state'
run_mvm checkpoint snap
expect_eq "auto tag" 0 "$rc"; t2=$(cat "$T/out")
gexec 'echo three > /data/d/state'
run_mvm checkpoint snap third
gexec 'echo four > /data/d/state; rm -rf /data/d/a'
run_mvm checkpoints snap --json
expect_match "list" "\"tag\":\"first\".*\"tag\":\"$t2\".*\"tag\":\"third\"" "$(cat "$T/out")"

run_mvm rollback snap "$t2"
expect_eq "rollback to an older one" 0 "$rc"
gexec 'cat /data/d/state; md5sum /data/d/a | cut -d" " -f1'
expect_eq "older state" "two
$(printf '%s\n' "$sums0" | grep /data/d/a | cut -d' ' -f1)" "$(cat "$T/out")"
gexec 'echo scribble > /data/d/state'
run_mvm rollback snap "$t2"
expect_eq "second rollback to the same" 0 "$rc"
gexec 'cat /data/d/state'
expect_eq "same state again" "two" "$(cat "$T/out")"
run_mvm rollback snap third
gexec 'cat /data/d/state'
expect_eq "forward to a later checkpoint" "three" "$(cat "$T/out")"
run_mvm rollback snap first
gexec 'md5sum /data/d/*; kill -0 '"$pid"' && echo alive'
expect_eq "back to the first" "$sums0
alive" "$(cat "$T/out")"

run_mvm rollback snap nosuch
expect_eq "unknown tag" 125 "$rc"
expect_match "unknown tag message" "no checkpoint named nosuch" "$(cat "$T/err")"
echo "snap-rollback: ok"
