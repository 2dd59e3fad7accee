#!/bin/sh
# Issue 16: a VMM that a guest took over finds nothing to use. A test build's
# VMM (build/testhooks/mvm, tools/sandbox/test_attack.h) tries, once fully
# confined, what an attacker would: read and write files outside its state
# directory, connect to another sandbox's api.sock, run a shell, ptrace or
# kill another process. Each fails or stops that VMM; the other sandbox runs
# on. With the seccomp filters only logging, the PID namespace alone still
# keeps every host process out of reach: it does not exist for the VMM.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

HOOKS=build/testhooks/mvm
# The test build finds no build/testhooks/guest beside it: name make guest's.
export MVM_GUEST_DIR="$PWD/build/guest"
[ -x "$HOOKS" ] || fail "$HOOKS missing (make testhooks)"
PLAIN=$MVM

sb_create victim --memory 256M
victim_pid=$(cat "$MVM_STATE_DIR/victim/pid")
echo secret >"$T/secret"

# attack NAME PLAN: create a sandbox whose VMM runs PLAN; its create status in $rc.
attack() {
	SANDBOXES="$SANDBOXES $1"
	MVM=$HOOKS
	export MVM_TEST_ATTACK="$2"
	run_mvm create "$1" --memory 256M
	unset MVM_TEST_ATTACK
	MVM=$PLAIN
}

own_pidns "$victim_pid" "the victim VMM"

# result NAME STEP: what the attacker's log says of STEP (waits for it).
result() {
	deadline=$(( $(date +%s) + 60 ))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		r=$("$MVM" logs "$1" 2>/dev/null | grep -F "mvm test-attack: $2: " |
			grep -v ': trying$' | tail -1)
		[ -n "$r" ] && { echo "${r#*"$2: "}"; return; }
		sleep 0.5
	done
	echo "no result"
}

attack files "read:$T/secret,write:$T/planted,connect:$MVM_STATE_DIR/victim/api.sock"
for step in "read $T/secret" "write $T/planted" "connect $MVM_STATE_DIR/victim/api.sock"; do
	r=$(result files "$step")
	case $r in
	SUCCEEDED|"no result") fail "$step: $r; log: $("$MVM" logs files | tail -5)" ;;
	esac
	echo "  $step: $r"
done
[ ! -e "$T/planted" ] || fail "the VMM wrote outside its state directory"

attack shell "exec:/bin/sh"
[ "$rc" != 0 ] || fail "a VMM that ran execve still serves"
"$MVM" logs shell | grep -q 'forbidden system call execve' ||
	fail "exec: not reported: $("$MVM" logs shell | tail -5)"
echo "  exec /bin/sh: stopped, reported"

attack tracer "ptrace:$victim_pid"
[ "$rc" != 0 ] || fail "a VMM that ran ptrace still serves"
"$MVM" logs tracer | grep -q 'forbidden system call ptrace' ||
	fail "ptrace: not reported: $("$MVM" logs tracer | tail -5)"
echo "  ptrace the other VMM: stopped, reported"

# The filters only log (MVM_SECCOMP=log): what stops these is the PID
# namespace. The other VMM, and this shell, are not there to be found.
export MVM_SECCOMP=log
attack spy "kill:$victim_pid,ptrace:$victim_pid,kill:$$"
unset MVM_SECCOMP
for step in "kill $victim_pid" "ptrace $victim_pid" "kill $$"; do
	r=$(result spy "$step")
	[ "$r" = "No such process" ] || fail "$step: $r (not invisible); log: $("$MVM" logs spy | tail -5)"
	echo "  $step: $r"
done

kill -0 "$victim_pid" || fail "the other sandbox's VMM died"
run_mvm exec victim -- echo fine
expect_eq "the other sandbox still serves" "fine" "$(cat "$T/out")"
echo "confine-attack: ok"
