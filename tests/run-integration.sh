#!/bin/sh
# The integration suite: real boots on real KVM. Runs directly where /dev/kvm
# works, inside the nested-KVM box where it does not, and fails loudly where
# neither is possible (see tests/nested/README.md).
#
# In the box, MVM_TEST_BOXES boxes share the tests (tests/nested/shards.sh).
# A box is a 2-vCPU machine and keeps about two cores busy when it has
# them (measured 2026-12-07: two boxes on 2 cores ran each test 1.6-2.5x
# slower), so the default is one box per two cores.
set -eu
cd "$(dirname "$0")/.."
boxes=${MVM_TEST_BOXES:-$(n=$(nproc 2>/dev/null || echo 2); [ "$n" -ge 4 ] && echo $((n / 2)) || echo 1)}
case $boxes in '' | *[!0-9]* | 0) echo "run-integration: MVM_TEST_BOXES must be a number >= 1, not '$boxes'" >&2; exit 2 ;; esac
if [ "$boxes" -gt 1 ] && why=$(tests/nested/maybe-nested.sh --why); then
	tests=$(tests/integration/run-all.sh --list | wc -l)
	[ "$boxes" -le "$tests" ] || boxes=$tests
	if [ "$boxes" -gt 1 ]; then
		MVM_NESTED_WHY=$why exec tests/nested/shards.sh "$boxes"
	fi
fi
exec tests/nested/maybe-nested.sh tests/integration/run-all.sh
