#!/bin/sh
# Issue 16: a VMM that a guest took over finds nothing to use. A test build's
# VMM (build/testhooks/mvm, tools/sandbox/test_attack.h) tries, once fully
# confined, what an attacker would: read and write files outside its state
# directory, connect to another sandbox's api.sock, run a shell, ptrace or
# kill another process. Each fails or stops that VMM; the other sandbox runs
# on. With the seccomp filters only logging, the PID namespace alone still
# keeps every host process out of reach: it does not exist for the VMM.
# Issue 27: a VMM that rewrites its own config.json to attach a host file
# finds the next start refused, the file never opened; a VMM started from
# a template can neither write nor chmod the template's shared disk layer.
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

# attack NAME PLAN [CREATE-OPTIONS]: create a sandbox (--memory 256M unless
# options are given) whose VMM runs PLAN; its create status in $rc.
attack() {
	n=$1 plan=$2
	shift 2
	[ $# -gt 0 ] || set -- --memory 256M
	SANDBOXES="$SANDBOXES $n"
	MVM=$HOOKS
	export MVM_TEST_ATTACK="$plan"
	run_mvm create "$n" "$@"
	cp "$T/err" "$T/attack-$n.err"
	unset MVM_TEST_ATTACK
	MVM=$PLAIN
}

# alog NAME: the attacker's log. A VMM stopped while its create still waited
# for the guest makes the create fail, and a failed create leaves nothing
# (issue 26): then its log is what the create printed, the console's end.
alog() { "$MVM" logs "$1" 2>/dev/null || cat "$T/attack-$1.err"; }

own_pidns "$victim_pid" "the victim VMM"

# result NAME STEP: what the attacker's log says of STEP (waits for it).
result() {
	deadline=$(( $(date +%s) + 60 ))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		r=$(alog "$1" | grep -F "mvm test-attack: $2: " |
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
# A create that fails leaves nothing (issue 26): its report is what the
# create said, the end of the console included.
grep -q 'forbidden system call execve' "$T/err" ||
	fail "exec: not reported: $(tail -5 "$T/err")"
[ ! -e "$MVM_STATE_DIR/shell" ] || fail "the failed create of shell left its state directory"
echo "  exec /bin/sh: stopped, reported"

attack tracer "ptrace:$victim_pid"
[ "$rc" != 0 ] || fail "a VMM that ran ptrace still serves"
grep -q 'forbidden system call ptrace' "$T/err" ||
	fail "ptrace: not reported: $(tail -5 "$T/err")"
[ ! -e "$MVM_STATE_DIR/tracer" ] || fail "the failed create of tracer left its state directory"
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

# Issue 27 item 1: config.json rewritten by its VMM to attach a host file.
# The rewrite itself succeeds (the state directory is the VMM's); the next
# start refuses the changed record before it opens anything.
echo host-data >"$T/hostfile"
attack cfg "config-disk:$T/hostfile"
[ "$rc" = 0 ] || fail "create cfg: $(cat "$T/err")"
r=$(result cfg "config-disk $T/hostfile")
[ "$r" = SUCCEEDED ] || fail "the VMM could not rewrite its config.json ($r): the test proves nothing"
grep -q hostfile "$MVM_STATE_DIR/cfg/config.json" || fail "config.json not rewritten"
run_mvm stop cfg
[ "$rc" = 0 ] || fail "stop cfg: $(cat "$T/err")"
if command -v strace >/dev/null; then
	rc=0
	strace -f -qq -e trace=open,openat,openat2 -o "$T/start.trace" \
		"$MVM" start cfg >"$T/out" 2>"$T/err" || rc=$?
	! grep -F "$T/hostfile" "$T/start.trace" ||
		fail "the start opened the host file named by the edited config.json"
else
	run_mvm start cfg
fi
[ "$rc" != 0 ] || fail "a start from a config.json its VMM rewrote succeeded"
expect_match "the refusal says what changed" "config.json of sandbox cfg changed since mvm wrote it" \
	"$(cat "$T/err")"
expect_eq "the host file is unchanged" "host-data" "$(cat "$T/hostfile")"
echo "  config.json rewritten by its VMM: the next start refused, the host file unopened"

# Issue 27 item 2: a template's frozen layers are hard-linked into each
# sandbox made from it. Its VMM cannot write one, nor make it writable
# (fchmod with a write bit stops it); a sibling's layer stays as it was.
export MVM_TEMPLATE_DIR="$T/templates"
run_mvm template create tpl --from victim
[ "$rc" = 0 ] || fail "template create: $(cat "$T/err")"
layer=$(ls "$T/templates/tpl" | grep -v -e '^state$' -e '^memory$' -e '\.json$' | head -1)
[ -n "$layer" ] || fail "no disk layer in the template: $(ls "$T/templates/tpl")"
sum_before=$(sha256sum <"$T/templates/tpl/$layer")
mode_before=$(stat -c %a "$T/templates/tpl/$layer")
SANDBOXES="$SANDBOXES sib"
run_mvm create sib --template tpl
[ "$rc" = 0 ] || fail "create sib --template: $(cat "$T/err")"
attack lay "write:$layer,chmod:$layer" --template tpl
# (Still there only when the create finished before the attack stopped it;
# the sibling's link, checked below, is made by the same code.)
[ ! -e "$MVM_STATE_DIR/lay" ] ||
	expect_eq "lay's layer is the template's (a link)" "$(stat -c %i "$T/templates/tpl/$layer")" \
		"$(stat -c %i "$MVM_STATE_DIR/lay/$layer")"
r=$(result lay "write $layer")
case $r in SUCCEEDED|"no result") fail "write $layer: $r; log: $(alog lay | tail -5)" ;; esac
echo "  write the shared layer: $r"
deadline=$(( $(date +%s) + 60 ))
until alog lay | grep -q 'forbidden system call fchmod'; do
	alog lay | grep -q "chmod $layer: SUCCEEDED" &&
		fail "the VMM made the template's layer writable"
	[ "$(date +%s)" -lt "$deadline" ] ||
		fail "fchmod 0644: not stopped; log: $(alog lay | tail -5)"
	sleep 0.5
done
echo "  fchmod the shared layer 0644: stopped, reported"
expect_eq "the layer's mode" "$mode_before" "$(stat -c %a "$T/templates/tpl/$layer")"
expect_eq "the layer's contents" "$sum_before" "$(sha256sum <"$T/templates/tpl/$layer")"
expect_eq "the sibling's layer is the template's" "$(stat -c %i "$T/templates/tpl/$layer")" \
	"$(stat -c %i "$MVM_STATE_DIR/sib/$layer")"
run_mvm exec sib -- echo fine
expect_eq "the sibling still serves" "fine" "$(cat "$T/out")"

kill -0 "$victim_pid" || fail "the other sandbox's VMM died"
run_mvm exec victim -- echo fine
expect_eq "the other sandbox still serves" "fine" "$(cat "$T/out")"
echo "confine-attack: ok"
