#!/bin/sh
# The Python SDK (sdk/python) against real sandboxes, through pytest
# (sdk/python/tests/): create, streamed runs and exit codes, stdin, timeouts,
# files and trees, checkpoint/rollback, fork, allow/deny against a test host
# in a network namespace (net.lib), diff/promote, the context manager.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

py=""
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import pytest' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || fail "pytest is missing (tools/deps.sh installs python3-pytest)"

if [ "$(id -u)" = 0 ]; then
	. tests/integration/net.lib
	# set -e is on: a sandbox the tests removed already must not end the trap early.
	trap 'for n in py-main py-child; do "$MVM" rm -f "$n" >/dev/null 2>&1 || true; done; net_cleanup' EXIT
	export MVM_TEST_NET_HOST=203.0.113.10
fi
case $MVM in /*) ;; *) MVM="$(pwd)/$MVM" ;; esac
export MVM_BIN="$MVM"
SANDBOXES="py-main py-child"

rc=0
"$py" -m pytest -p no:cacheprovider -q -x sdk/python/tests || rc=$?
# 5: pytest collected no tests; that is a failure, not a pass.
[ "$rc" = 0 ] || fail "pytest exited with status $rc"
