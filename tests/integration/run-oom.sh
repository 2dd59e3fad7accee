#!/bin/sh
# A VMM the kernel's OOM killer ends while `mvm run`'s command runs is named
# as such (its cgroup's memory.events counts the kill), not reported as a
# lost agent connection. The test lowers the sandbox cgroup's memory.max
# below what the guest is about to touch, as a host short of memory would.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

"$MVM" run --memory 256M -- sh -c 'while [ ! -e /tmp/go ]; do sleep 0.1; done
	dd if=/dev/zero of=/dev/shm/fill bs=1M count=100 2>/dev/null && echo filled' >"$T/run.out" 2>"$T/run.err" &
runpid=$!
vmm=$(run_vmm_pid "$runpid") || { cat "$T/run.err" >&2; fail "mvm run did not start"; }
cg=$(sed -n 's/^0:://p' "/proc/$vmm/cgroup")
case "$cg" in
*/mvm/run-*) ;;
*) kill "$runpid"; wait "$runpid"; skip "the VMM is in no cgroup of its own here ($cg)" ;;
esac
d=/sys/fs/cgroup$cg
echo $(( $(cat "$d/memory.current") + (8 << 20) )) > "$d/memory.max" ||
	fail "cannot lower $d/memory.max"
"$MVM" exec "run-$runpid" -- touch /tmp/go || fail "exec touch /tmp/go"
rc=0
wait "$runpid" || rc=$?
expect_eq "status of the killed run" 125 "$rc"
! grep -q filled "$T/run.out" || fail "the guest filled 100 MiB under an 8 MiB margin"
expect_match "why the run ended" "mvm run: the kernel's OOM killer ended the VMM while the command ran: its cgroup's memory.max \\(guest RAM \\+ 256 MiB\\) was reached" "$(cat "$T/run.err")"
[ ! -e "$MVM_STATE_DIR/run-$runpid" ] || fail "the run's state directory was left behind"
echo "run-oom: ok"
