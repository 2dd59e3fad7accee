#!/bin/sh
# The Python SDK (sdk/python) against real sandboxes, through pytest
# (sdk/python/tests/): create, streamed runs and exit codes, stdin, timeouts,
# files and trees, checkpoint/rollback, fork, snapshot/restore (remote: refused,
# a host directory), allow/deny against a test host
# in a network namespace (net.lib), diff/promote, the context manager.
# Twice: in local mode, then in remote mode (MVM_TEST_REMOTE=1: the same
# tests through a real `mvm serve` on a loopback port that conftest.py
# starts with fresh tokens, plus test_sdk_remote.py: a wrong key, another
# tenant's sandbox, a server killed mid-stream).
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
	trap 'for n in $SANDBOXES; do "$MVM" rm -f "$n" >/dev/null 2>&1 || true; done; net_cleanup' EXIT
	export MVM_TEST_NET_HOST=203.0.113.10
fi
case $MVM in /*) ;; *) MVM="$(pwd)/$MVM" ;; esac
export MVM_BIN="$MVM"
# Remote mode's sandboxes are TENANT.NAME on the host (conftest.py: pytest).
SANDBOXES="py-main py-child py-restored pytest.py-main pytest.py-child"

"$MVM" serve --help >/dev/null 2>&1 || fail "$MVM has no 'serve' verb: the remote half cannot run"

# suite MODE [VAR=VALUE...]: the whole suite; 5 (no tests collected) is a failure too.
suite() {
	mode=$1
	shift
	step "pytest, $mode mode"
	rc=0
	env "$@" "$py" -m pytest -p no:cacheprovider -q -x -rs sdk/python/tests || rc=$?
	[ "$rc" = 0 ] || fail "pytest ($mode mode) exited with status $rc"
}
suite local
suite remote MVM_TEST_REMOTE=1
