#!/bin/sh
# kvm-smoke: does /dev/kvm actually run guest code here? Builds
# tests/integration/kvm_smoke.c (raw KVM ioctls, no extra libs) into build/
# and runs it. Exit 0 pass, 1 fail. A missing /dev/kvm is a failure, not a
# skip: this test exists to prove KVM works (run it through
# tests/nested/maybe-nested.sh on hosts without KVM).
set -eu
cd "$(dirname "$0")/../.."
out=${BUILD:-build}/tests/kvm_smoke
mkdir -p "$(dirname "$out")"
if [ ! -e /dev/kvm ]; then
	echo "kvm-smoke: FAIL: no /dev/kvm (run via tests/nested/maybe-nested.sh)" >&2
	exit 1
fi
${CC:-gcc} -std=gnu11 -O2 -Wall -Wextra -Werror -o "$out" tests/integration/kvm_smoke.c
exec "$out"
