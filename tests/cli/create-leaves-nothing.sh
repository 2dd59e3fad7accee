#!/bin/sh
# A `mvm create` that fails after its state directory exists leaves nothing
# behind (issue 26): no state directory (disk overlay, sockets, logs), no
# cgroup, no VMM; the console's end is printed instead. KVM-free, so it runs
# in `make unit` on any host:
#   - a kernel that is not one (fails wherever the VMM loads it);
#   - a plain create: fails where /dev/kvm is missing or unusable (a PVM
#     /dev/kvm, this project's hosts) or no guest is built; where it boots,
#     the sandbox is removed and that case says so.
#   create-leaves-nothing.sh [MVM]
set -eu
MVM=${1:-build/mvm}
[ -x "$MVM" ] || { echo "create-leaves-nothing: $MVM not built" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-createfail.XXXXXX")
export MVM_STATE_DIR="$T/state" MVM_START_TIMEOUT="${MVM_START_TIMEOUT:-60}"
trap 'for n in junk plain; do "$MVM" rm -f "$n" >/dev/null 2>&1 || true; done; rm -rf "$T"' EXIT

fail() {
	echo "FAIL create-leaves-nothing: $*" >&2
	sed 's/^/  | /' "$T/err" >&2
	exit 1
}

# nothing_left NAME: no state, no cgroup, no VMM of NAME.
nothing_left() {
	[ ! -e "$MVM_STATE_DIR/$1" ] || fail "$1: the state directory was left: $(ls -A "$MVM_STATE_DIR/$1" | tr '\n' ' ')"
	cg=$(find /sys/fs/cgroup -maxdepth 6 -type d -path "*/mvm/$1" 2>/dev/null | head -n 1)
	[ -z "$cg" ] || fail "$1: its cgroup $cg was left"
	for c in /proc/[0-9]*/cmdline; do
		{ tr '\0' ' ' <"$c"; } 2>/dev/null | grep -q "mvm vmm $1 " && fail "$1: its VMM still runs ($c)"
	done
	"$MVM" ls >"$T/ls" 2>&1 || true
	! grep -qw "$1" "$T/ls" || fail "$1: mvm ls still lists it"
}

head -c 1048576 /dev/urandom >"$T/junk-kernel"
rc=0
"$MVM" create junk --kernel "$T/junk-kernel" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" != 0 ] || fail "create with a kernel of random bytes succeeded"
grep -q "did not start" "$T/err" || fail "no reason given"
nothing_left junk

rc=0
"$MVM" create plain >"$T/out" 2>"$T/err" || rc=$?
if [ "$rc" = 0 ]; then
	"$MVM" rm -f plain
	echo "create-leaves-nothing: plain create booted here (usable KVM): only the bad kernel was checked"
else
	nothing_left plain
	# The name is free again: the same failure, not "already exists".
	rc=0
	"$MVM" create plain >"$T/out" 2>"$T/err" || rc=$?
	! grep -q "already exists" "$T/err" || fail "plain: the name stayed taken"
	nothing_left plain
fi
echo "create-leaves-nothing: ok"
