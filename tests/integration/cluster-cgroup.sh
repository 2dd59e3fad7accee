#!/bin/sh
# Issue 29: mvm nests inside whoever started it. A "job" cgroup with
# memory.max, as a cluster engine makes one (a Slurm step, a systemd scope):
# a sandbox created from a shell in it has its VMM, its network helper and
# its relay (started from outside the job) beneath the job's cgroup, its
# guest's memory is charged to the job, and create says once that it has
# no cgroup of its own (the job holds processes: EBUSY), and so does a
# `mvm run` started there. The engine's kill
# (cgroup.kill on the job) then ends all of it, and `mvm gc` leaves no
# process, state directory or cgroup behind. A sandbox that does get its
# own cgroup (started from the cgroup v2 root, as in the test box) is
# reaped by gc with that cgroup too.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

CG=/sys/fs/cgroup
[ -w "$CG/cgroup.subtree_control" ] && [ "$(sed -n 's/^0:://p' /proc/self/cgroup)" = / ] ||
	skip "needs to run in a writable cgroup v2 root (the test box)"
grep -qw memory "$CG/cgroup.subtree_control" || echo +memory >"$CG/cgroup.subtree_control" ||
	skip "the memory controller cannot be enabled here"
JOB=$CG/mvm-it-job.$$
job_gone() {
	[ -d "$JOB" ] || return 0
	echo 1 >"$JOB/cgroup.kill" 2>/dev/null || true
	for _ in $(seq 100); do grep -q 'populated 0' "$JOB/cgroup.events" && break; sleep 0.1; done
	find "$JOB" -depth -mindepth 1 -type d -exec rmdir {} \; 2>/dev/null
	rmdir "$JOB" 2>/dev/null || true
}
trap 'job_gone; sb_cleanup' EXIT
mkdir "$JOB"
echo 3G >"$JOB/memory.max"

# pids_in CGROUP_DIR: the pids of it and every cgroup below it.
pids_in() {
	find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null
}
# beneath PID WHAT: PID's cgroup is the job's or below it.
beneath() {
	c=$(sed -n 's/^0:://p' "/proc/$1/cgroup")
	case "$c" in
	"${JOB#$CG}"|"${JOB#$CG}"/*) ;;
	*) fail "$2 (pid $1) is in $c, not beneath the job ${JOB#$CG}" ;;
	esac
}
# wait_for COMMAND...: until it succeeds; fails after 300 tries (a bound
# on polls, not a clock).
wait_for() {
	tries=0
	until "$@"; do
		tries=$((tries + 1))
		[ "$tries" -lt 300 ] || return 1
		sleep 0.2
	done
}

step "create box from a shell in the job cgroup"
SANDBOXES="$SANDBOXES box"
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" create box --memory 512M' sh "$JOB" "$MVM" \
	>"$T/create.out" 2>"$T/create.err" || { cat "$T/create.err" >&2; fail "create box in the job"; }
expect_match "create's word on where the sandbox lives" \
	"mvm create: box: the caller's cgroup ${JOB#$CG} holds processes itself .*stays in it and is charged to it" \
	"$(cat "$T/create.err")"
[ "$(grep -c 'holds processes' "$T/create.err")" = 1 ] || fail "said more than once: $(cat "$T/create.err")"
vmm=$(cat "$MVM_STATE_DIR/box/pid")
beneath "$vmm" "the VMM"
helper=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["helper_pid"])' \
	"$MVM_STATE_DIR/box/confine.json")
[ "$(sed -n 's/^Name:\t//p' "/proc/$helper/status")" = mvm-net ] || fail "no helper at $helper"
beneath "$helper" "the network helper"
run_mvm inspect box --json
python3 - "$T/out" "${JOB#$CG}" <<'EOF' || fail "inspect: $(cat "$T/out")"
import json, sys
p = json.load(open(sys.argv[1]))["protections"]
assert p["cgroup"] is None, p["cgroup"]
assert p["cgroup_caller"] == sys.argv[2], p["cgroup_caller"]
assert "holds processes" in p["cgroup_note"], p["cgroup_note"]
EOF
"$MVM" events box --json | grep -q '"cgroup_note":"the caller' || fail "no confined event with the note"

step "mvm run from the job says so too"
# Every task under an engine is a `mvm run` (examples/slurm/): it said
# nothing of its placement before (only create and start did).
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" run --memory 256M -- true' sh "$JOB" "$MVM" \
	>"$T/run.out" 2>"$T/run.err" || { cat "$T/run.err" >&2; fail "mvm run in the job"; }
expect_match "run's word on where the sandbox lives" \
	"mvm run: run-[0-9]+: the caller's cgroup ${JOB#$CG} holds processes itself .*stays in it and is charged to it" \
	"$(cat "$T/run.err")"
[ "$(grep -c 'holds processes' "$T/run.err")" = 1 ] || fail "run said it more than once: $(cat "$T/run.err")"

step "a relay started from outside the job joins the VMM's cgroup"
python3 - "$MVM" >"$T/relay.out" 2>&1 <<'EOF' &
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.execv(sys.argv[1], ["mvm", "relay", "box", "8080"])
EOF
relay=$!
in_job() { grep -qx "0::${JOB#$CG}" "/proc/$relay/cgroup"; }
wait_for in_job || fail "the relay stayed in $(cat /proc/$relay/cgroup): $(cat "$MVM_STATE_DIR/box/relay.log" 2>/dev/null)"

step "the guest's memory is charged to the job"
before=$(cat "$JOB/memory.current")
run_mvm exec box -- sh -c 'dd if=/dev/zero of=/dev/shm/fill bs=1M count=192 2>/dev/null && echo filled'
expect_eq "guest fill" filled "$(cat "$T/out")"
after=$(cat "$JOB/memory.current")
# 192 MiB written into the guest's tmpfs: its pages are guest RAM the VMM
# touches now; at least 160 MiB of them must show up in the job's count.
[ $(( after - before )) -ge $(( 160 << 20 )) ] ||
	fail "the job's memory.current grew by $(( (after - before) >> 20 )) MiB (from $before), not by the guest's 192"

step "a sandbox with a cgroup of its own (from the cgroup v2 root)"
sb_create own --memory 256M
own=$(cat "$MVM_STATE_DIR/own/pid")
expect_eq "own's cgroup" /mvm/own "$(sed -n 's/^0:://p' "/proc/$own/cgroup")"
! grep -q 'holds processes\|no delegated' "$T/create.err" || fail "create own said: $(cat "$T/create.err")"

step "the engine's kill: cgroup.kill on the job, and on own's cgroup"
echo 1 >"$JOB/cgroup.kill"
echo 1 >"$CG/mvm/own/cgroup.kill"
job_empty() { grep -q 'populated 0' "$JOB/cgroup.events" && grep -q 'populated 0' "$CG/mvm/own/cgroup.events"; }
wait_for job_empty || fail "the job still holds: $(pids_in "$JOB")"
wait $relay 2>/dev/null || true
# The VMM's keeper (own's) lives outside its cgroup and ends with it.
gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status"; }
wait_for sh -c "! pgrep -f '^mvm vmm own' >/dev/null" || fail "own's keeper outlived its VMM"

run_mvm ls
expect_match "ls after the kill" "box +crashed" "$(cat "$T/out")"
expect_match "ls says what to do" "mvm gc" "$(cat "$T/err")"
run_mvm gc --dry-run
expect_eq "gc --dry-run" 0 "$rc"
expect_match "dry run" "would remove box" "$(cat "$T/out")"
[ -d "$MVM_STATE_DIR/box" ] || fail "gc --dry-run removed box"
run_mvm gc
expect_eq "gc" 0 "$rc"
expect_match "gc names box" "removed box \\(its VMM is gone\\)" "$(cat "$T/out")"
expect_match "gc names own's cgroup" "removed own .*cgroup /mvm/own" "$(cat "$T/out")"

step "nothing is left"
for p in "$vmm" "$helper" "$relay" "$own"; do gone "$p" || fail "pid $p lives: $(tr '\0' ' ' <"/proc/$p/cmdline")"; done
[ ! -e "$MVM_STATE_DIR/box" ] && [ ! -e "$MVM_STATE_DIR/own" ] || fail "a state directory is left: $(ls "$MVM_STATE_DIR")"
[ ! -e "$CG/mvm/own" ] || fail "own's cgroup is left"
[ -z "$(find "$JOB" -mindepth 1 -type d)" ] || fail "cgroups left in the job: $(find "$JOB" -mindepth 1 -type d)"
run_mvm ls
expect_eq "ls after gc" 1 "$(wc -l <"$T/out")"
run_mvm gc
expect_eq "a second gc has nothing to do" "" "$(cat "$T/out")"
SANDBOXES=""
echo "cluster-cgroup: ok"
