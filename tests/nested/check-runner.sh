#!/bin/sh
# The integration runner's failure accounting, without KVM (make unit): a
# sandbox whose guest reset on its own is named GUEST-RESET by lib.sh's
# fail and time-out handler, with the console lines before the reset; a
# reset that `mvm stop` asked for is not; run-all.sh's box_flake and
# retry_again (tests/integration/flake.lib) give it its own reason, before
# "timed out", and one more attempt only, inside the nested box only.
# Fake sandboxes: events.jsonl and console.log as the VMM writes them.
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d "${TMPDIR:-/tmp}/check-runner.XXXXXX")
trap 'rm -rf "$W"' EXIT
bad=0
no() { echo "check-runner: FAIL: $*" >&2; bad=1; }

# sandbox DIR EVENT_TYPES...: a state directory with these events in order
# ("stopped:OUTCOME:MESSAGE" for a stopped event) and a console that ends
# with a reset.
sandbox() {
	d=$1
	shift
	mkdir -p "$d"
	for ev in "$@"; do
		case $ev in
		stopped:*)
			o=${ev#stopped:}
			m=${o#*:}
			echo "{\"time\":\"2026-12-06T04:00:00.000Z\",\"type\":\"stopped\",\"outcome\":\"${o%%:*}\",\"message\":\"$m\"}" ;;
		*) echo "{\"time\":\"2026-12-06T04:00:00.000Z\",\"type\":\"$ev\"}" ;;
		esac
	done >"$d/events.jsonl"
	printf '%s\n' "[    0.1] booting" "[    1.0] EXT4-fs (vdb): mounted" \
		"[   90.0] the-line-before-the-reset" "[   90.1] reboot: Restarting system" >"$d/console.log"
}

# fail_of SETUP: stderr of lib.sh's fail (then of timed_out) after SETUP
# built sandboxes under the test's $T/state.
fail_of() {
	(
		. tests/integration/lib.sh
		trap 'rm -rf "$T"' EXIT
		eval "$1"
		fail "the check" 2>&1
	) 2>&1
}
timeout_of() {
	(
		. tests/integration/lib.sh
		trap 'rm -rf "$T"' EXIT
		eval "$1"
		timed_out 2>&1
	) 2>&1
}

reset='sandbox "$T/state/nb" created started stopping "stopped:reboot:the guest reset (mvm stop, or a reboot inside the guest)" started "stopped:reboot:the guest reset (mvm stop, or a reboot inside the guest)"'
out=$(fail_of "$reset")
echo "$out" | grep -q 'GUEST-RESET: sandbox nb reset on its own' || no "a reset nobody asked for is not named: $out"
echo "$out" | grep -q 'the-line-before-the-reset' || no "the console before the reset is not shown: $out"
[ "$(echo "$out" | tail -1)" = "  | [   90.1] reboot: Restarting system" ] ||
	no "the reset is not the last line of fail's output (the runner shows a retried attempt's tail): $out"
out=$(timeout_of "$reset")
echo "$out" | grep -q 'GUEST-RESET' || no "a test ended by its limit does not name the reset: $out"

asked='sandbox "$T/state/nb" created started stopping "stopped:reboot:the guest reset (mvm stop, or a reboot inside the guest)" started stopping "stopped:reboot:x"'
out=$(fail_of "$asked")
echo "$out" | grep -q 'GUEST-RESET' && no "a reset mvm stop asked for is named: $out"
killed='sandbox "$T/state/nb" started killed "stopped:reboot:x"'
out=$(fail_of "$killed")
echo "$out" | grep -q 'GUEST-RESET' && no "a VMM mvm stop killed is named a reset: $out"
tf='sandbox "$T/state/nb" started "stopped:reboot:vCPU 0 triple-faulted (KVM_EXIT_SHUTDOWN)"; echo "mvm vmm: vCPU 0 triple-faulted (KVM_EXIT_SHUTDOWN)" >> "$T/state/nb/console.log"'
out=$(fail_of "$tf")
echo "$out" | grep -q 'GUEST-RESET' && no "a triple fault is named a reset too: $out"
echo "$out" | grep -q 'GUEST-TRIPLE-FAULT' || no "a triple fault is not named: $out"
panic='sandbox "$T/state/nb" started "stopped:panic:guest kernel panic: Kernel panic - not syncing: Fatal exception"'
out=$(fail_of "$panic")
echo "$out" | grep -q 'GUEST-RESET.*outcome":"panic' || no "a guest panic is not named a reset: $out"
exited='sandbox "$T/state/nb" started "stopped:exited:shutdown requested through the API"'
out=$(fail_of "$exited")
echo "$out" | grep -q 'GUEST-RESET' && no "an API shutdown is named a reset: $out"

# The runner's side: its reason, its retries.
. tests/integration/flake.lib
box_stalls() { echo 0; }
box_oopses() { echo 0; }
log=$W/it.log
printf '%s\n' "FAIL: x" "  GUEST-RESET: sandbox nb reset on its own" >"$log"
why=$(MVM_IN_NESTED_BOX=1 box_flake 1 "$log" 0 0)
case $why in "a guest reset on its own"*"in the emulated box") ;; *) no "a guest reset's reason: '$why'" ;; esac
case $why in *"nested box's"*) no "a guest reset is put down to the box: '$why'" ;; esac
case $why in *";"*) no "a reason with ';', which the summary splits on: '$why'" ;; esac
why=$(MVM_IN_NESTED_BOX=1 box_flake 124 "$log" 0 0)
case $why in "a guest reset on its own"*) ;; *) no "a reset that ran into the limit is called '$why'" ;; esac
[ -z "$(MVM_IN_NESTED_BOX= box_flake 1 "$log" 0 0)" ] || no "a guest reset is retried outside the box"
[ -z "$(MVM_IN_NESTED_BOX=1 box_flake 0 "$log" 0 0)" ] || no "a passed test is retried"
case $(guest_cause "$log") in "a guest reset on its own"*) ;; *) no "guest_cause: '$(guest_cause "$log")'" ;; esac
retry_again "" "$why" || no "a first guest reset gets no second attempt"
retry_again "$why" "$why" && no "a second guest reset gets a third attempt"
retry_again "it timed out in the emulated box" "$why" || no "a reset after a time-out gets no attempt"
tfw="a guest vCPU triple-faulted in the emulated box"
retry_again "$tfw" "$tfw" || no "a second triple fault gets no third attempt (as before)"
retry_again "it timed out in the emulated box" "it timed out in the emulated box" && no "a second time-out is retried"
printf '%s\n' "FAIL: x" "  GUEST-TRIPLE-FAULT: a guest vCPU" "  GUEST-RESET: y" >"$log"
[ "$(MVM_IN_NESTED_BOX=1 box_flake 1 "$log" 0 0)" = "$tfw" ] || no "a triple fault is not named first"

[ "$bad" = 0 ] && echo "check-runner: ok"
exit "$bad"
