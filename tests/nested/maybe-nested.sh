#!/bin/sh
# maybe-nested.sh CMD [ARGS...] — run CMD where /dev/kvm works.
#
# The single entry point of `make test`, `make demo` and `make bench-*`:
#   - a usable /dev/kvm here (a developer's machine): exec CMD directly;
#   - otherwise, with qemu-system-x86_64: run CMD inside the nested KVM box
#     (tests/nested/box.sh), same cwd, output streamed, CMD's exit code;
#   - otherwise fail loudly (exit 2): a KVM test must never pass silently.
# MVM_NESTED=1 forces the box even with /dev/kvm (to test the runner);
# MVM_NESTED=0 forbids it (fail instead of being slow).
# maybe-nested.sh --why: print why the box is needed and exit 0, or exit 1
# when commands run directly here (2: neither is possible).
set -u
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARGS...] | $0 --why" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)

# "Usable" means open(O_RDWR) succeeds, not mere existence: a node without
# permission, or without a driver behind it, is as good as none. And it must
# be hardware KVM: a /dev/kvm on a CPU without vmx/svm is a software one
# (KVM PVM, seen on this project's machines as kvm_pvm) that runs only
# kernels built as PVM guests — ours stops at its first instructions with an
# internal error, so it is as good as none too.
# kvm_unusable: why /dev/kvm will not do (printed), or nothing (status 1).
kvm_unusable() {
	if [ ! -c /dev/kvm ]; then echo "no /dev/kvm"
	elif ! (: <>/dev/kvm) 2>/dev/null; then echo "/dev/kvm exists but cannot be opened read-write"
	elif [ -d /sys/module/kvm_pvm ] || ! grep -qwE 'vmx|svm' /proc/cpuinfo; then
		echo "/dev/kvm is not hardware KVM (no vmx/svm, or KVM PVM): it cannot boot a standard guest kernel"
	else return 1; fi
}

case "${MVM_NESTED:-}" in
1) export MVM_NESTED_WHY="MVM_NESTED=1 forces it" ;;
0 | "")
	if ! why=$(kvm_unusable); then
		[ "$1" = --why ] && exit 1
		exec "$@"
	fi
	if [ "${MVM_NESTED:-}" = 0 ]; then
		echo "maybe-nested: $why and MVM_NESTED=0 forbids the nested box; cannot run: $*" >&2
		exit 2
	fi
	export MVM_NESTED_WHY="$why"
	;;
*) echo "maybe-nested: MVM_NESTED must be 0 or 1, not '$MVM_NESTED'" >&2; exit 2 ;;
esac

if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	echo "maybe-nested: FAIL: $MVM_NESTED_WHY and no qemu-system-x86_64 for a nested box;" >&2
	echo "maybe-nested: cannot run '$*'. Install the deps (make deps) or run on a KVM host." >&2
	exit 2
fi
if [ "$1" = --why ]; then echo "$MVM_NESTED_WHY"; exit 0; fi
exec "$here/box.sh" run "$@"
