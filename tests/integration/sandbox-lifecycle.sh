#!/bin/sh
# create -> cp a tree in and out byte-identical -> stop -> start (disk kept)
# -> a crash -> a reboot inside the guest -> rm (state gone); events, console
# marks and status along the way.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

sb_create life --disk-size 64M
run_mvm ls --json
expect_match "ls running" '"status":[[:space:]]*"running"' "$(tr -d '\n' < "$T/out")"

mkdir -p "$T/tree/sub/deep"
head -c 1000000 /dev/urandom > "$T/tree/blob"
echo hi > "$T/tree/sub/a.txt"; chmod 640 "$T/tree/sub/a.txt"
printf '#!/bin/sh\necho run\n' > "$T/tree/sub/deep/x.sh"; chmod 755 "$T/tree/sub/deep/x.sh"
ln -s a.txt "$T/tree/sub/link"
run_mvm cp "$T/tree" life:/data/
expect_eq "cp in" 0 "$rc"
run_mvm exec life -- /data/tree/sub/deep/x.sh
expect_eq "copied script runs" "run" "$(cat "$T/out")"
mkdir "$T/back"
run_mvm cp life:/data/tree "$T/back"
expect_eq "cp out" 0 "$rc"
diff -r "$T/tree" "$T/back/tree" || fail "tree changed in the round trip"
expect_eq "mode kept" "640" "$(stat -c %a "$T/back/tree/sub/a.txt")"
expect_eq "link kept" "a.txt" "$(readlink "$T/back/tree/sub/link")"

# Control API: pause parks the vCPUs, resume lets the guest go on.
api() {
	python3 - "$MVM_STATE_DIR/life/api.sock" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(('{"op":"%s"}\n' % sys.argv[2]).encode())
print(s.makefile().readline().strip())
PY
}
expect_match "api status" '"status":"running"' "$(api status)"
expect_match "api pause" '"ok":true' "$(api pause)"
run_mvm ls --json
expect_match "ls paused" '"status":[[:space:]]*"paused"' "$(tr -d '\n' < "$T/out")"
expect_match "api resume" '"ok":true' "$(api resume)"
run_mvm exec life -- echo resumed
expect_eq "exec after resume" "resumed" "$(cat "$T/out")"

# No sync here: the stop's own sync must write it. And the sandbox is
# paused when stopped: mvm stop resumes it so the guest can sync (it used
# to wait 5 s for an agent that could not answer, then stop the VMM
# through its API, the file lost).
run_mvm exec life -- sh -c 'echo persisted-123 > /data/keep'
expect_match "api pause before stop" '"ok":true' "$(api pause)"
run_mvm stop life
expect_eq "stop" 0 "$rc"
# Clean: the guest synced its disks and reset itself; mvm stop says when
# it had to stop the VMM instead. (Issue 26: the guest's reset used to
# drop the agent's OK when it beat the vsock driver's send, and mvm stop
# then stopped the VMM through its API; 2 of 3 box attempts.)
expect_eq "stop's messages" "" "$(cat "$T/err")"
run_mvm ls --json
expect_match "ls stopped" '"status":[[:space:]]*"stopped"' "$(tr -d '\n' < "$T/out")"
run_mvm exec life -- true
expect_eq "exec on a stopped sandbox" 125 "$rc"

run_mvm start life
expect_eq "start" 0 "$rc"
run_mvm exec life -- cat /data/keep
expect_eq "disk persisted" "persisted-123" "$(cat "$T/out")"

run_mvm events life --json
expect_match "events" '"type":"stopped"' "$(cat "$T/out")"
run_mvm logs life
expect_eq "logs" 0 "$rc"

# A VMM that dies is reported as crashed, its sockets cleaned, and start works again.
kill -9 "$(cat "$MVM_STATE_DIR/life/pid")"
sleep 1
run_mvm ls --json
expect_match "ls crashed" '"status":[[:space:]]*"crashed"' "$(tr -d '\n' < "$T/out")"
[ ! -e "$MVM_STATE_DIR/life/api.sock" ] || fail "stale api.sock left"
run_mvm start life
expect_eq "start after a crash" 0 "$rc"
run_mvm exec life -- cat /data/keep
expect_eq "disk after a crash" "persisted-123" "$(cat "$T/out")"

# A reset of the guest's own (issue 26): its VMM ends as at a stop, but no
# "stopping" event comes before its "stopped", and console.log, which
# outlives restarts, marks where each VMM's part begins and ends.
vpid=$(cat "$MVM_STATE_DIR/life/pid")
run_mvm exec life -- /sbin/reboot -f	# its connection goes with the guest
python3 -c '
import os, select, sys
try:
    fd = os.pidfd_open(int(sys.argv[1]))
except ProcessLookupError:
    sys.exit(0)
select.select([fd], [], [])' "$vpid" || fail "cannot wait for the VMM $vpid"
ev=$(grep -o '"type":"\(started\|stopping\|stopped\)"' "$MVM_STATE_DIR/life/events.jsonl" | cut -d'"' -f4 | tr '\n' ' ')
# create, stop, start, (kill -9: no event), start, the guest's reboot.
expect_eq "lifecycle events" "started stopping stopped started started stopped " "$ev"
run_mvm logs life
marks=$(grep -ao 'VMM started\|guest stopped ([a-z]*)\|reboot: Restarting system' "$T/out" | tr '\n' '|')
expect_eq "console marks" "VMM started|reboot: Restarting system|guest stopped (reboot)|VMM started|VMM started|reboot: Restarting system|guest stopped (reboot)|" "$marks"
run_mvm start life
expect_eq "start after the guest's reboot" 0 "$rc"

run_mvm rm life
expect_eq "rm refuses a running sandbox" 125 "$rc"
run_mvm rm -f life
expect_eq "rm -f" 0 "$rc"
[ ! -e "$MVM_STATE_DIR/life" ] || fail "state left after rm"
echo "sandbox-lifecycle: ok"
