#!/bin/sh
# Run every tests/integration/*.sh (this script excepted) where /dev/kvm works,
# each under a time limit, and end with the plain "N passed, N failed" line.
# Called through tests/nested/maybe-nested.sh by tests/run-integration.sh.
set -u
cd "$(dirname "$0")/../.."
[ -c /dev/kvm ] || { echo "run-all: /dev/kvm missing: refusing to pass" >&2; exit 2; }
limit=${MVM_TEST_TIMEOUT:-600}
filter=${MVM_TEST_FILTER:-}
pass=0 failed=0 skipped=0 failures=""
for t in tests/integration/*.sh; do
	name=$(basename "$t" .sh)
	case "$name" in run-all|lib) continue ;; esac
	if [ -n "$filter" ] && ! echo "$name" | grep -Eq "$filter"; then continue; fi
	start=$(date +%s)
	timeout -k 10 "$limit" sh "$t" > "/tmp/it-$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) skipped=$((skipped + 1)); echo "SKIP  $name: $(tail -1 "/tmp/it-$name.log")" ;;
	*)
		failed=$((failed + 1)); failures="$failures $name"
		[ $rc = 124 ] && echo "FAIL  $name: timed out after ${limit}s" || echo "FAIL  $name (status $rc, ${secs}s)"
		sed 's/^/    | /' "/tmp/it-$name.log" | tail -40
		;;
	esac
done
echo
[ -z "$failures" ] || echo "failed:$failures"
echo "integration: $pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$pass" -gt 0 ]
