#!/bin/sh
# The integration suite split over several boxes, without KVM (make unit):
# shards.sh's plan runs every test exactly once, on every box, balanced by
# tests/integration/durations.txt; summary.sh makes one report of several
# boxes' rows, counts a test lost with its box as failed, and fails unless
# something passed and nothing failed.
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d "${TMPDIR:-/tmp}/check-shards.XXXXXX")
trap 'rm -rf "$W"' EXIT
bad=0
no() { echo "check-shards: FAIL: $*" >&2; bad=1; }

# The plan: each listed test once, every box busy, loads within the
# longest test of each other (what longest-first onto the least loaded
# box guarantees).
sh tests/integration/run-all.sh --list | sort >"$W/all"
for n in 1 2 3; do
	tests/nested/shards.sh --plan $n >"$W/plan" || no "--plan $n failed"
	awk '{ print $2 }' "$W/plan" | sort >"$W/planned"
	cmp -s "$W/all" "$W/planned" || no "plan for $n boxes does not run every test exactly once"
	[ "$(awk '{ print $1 }' "$W/plan" | sort -u | wc -l)" = $n ] || no "plan leaves one of $n boxes idle"
	awk 'FILENAME == ARGV[1] { if ($1 !~ /^#/) w[$1] = $2; next }
		{ s = ($2 in w) ? w[$2] : 60; load[$1] += s; if (s > big) big = s }
		END { lo = -1; for (k in load) { if (lo < 0 || load[k] < lo) lo = load[k]; if (load[k] > hi) hi = load[k] }
			exit !(hi - lo <= big) }' tests/integration/durations.txt "$W/plan" ||
		no "plan for $n boxes is unbalanced: $(awk '{ print $1 }' "$W/plan" | sort | uniq -c | tr '\n' ' ')"
done
MVM_TEST_FILTER='^kvm-smoke$' tests/nested/shards.sh --plan 2 >"$W/plan"
[ "$(cat "$W/plan")" = "1 kvm-smoke" ] || no "a one-test filter: $(cat "$W/plan")"
tests/nested/shards.sh --plan 0 >/dev/null 2>&1 && no "--plan 0 accepted"

# The report: two boxes' rows, one lost test, one retry.
printf '%s\n' "b-test PASS 10 1 " "d-test SKIP 0 1 " "c-test FAIL 30 2 the nested box froze during it" >"$W/rows.1"
printf '%s\n' "a-test PASS 12 1 " "e-test LOST - 1 box 2 ended (status 124) before it ran" >"$W/rows.2"
sh tests/integration/summary.sh "$W/rows.1" "$W/rows.2" >"$W/out" && no "summary passed with a failure and a lost test"
tail -1 "$W/out" | grep -qx 'integration: 2 passed, 2 failed, 1 skipped' || no "counts: $(tail -1 "$W/out")"
grep -qx 'failed: c-test e-test' "$W/out" || no "failed line: $(grep '^failed' "$W/out")"
grep -qx 'retried: 1 (the nested box froze during it x1)' "$W/out" || no "retried line: $(grep '^retried' "$W/out")"
[ "$(grep -E '^[a-e]-test ' "$W/out" | awk '{ print $1 }' | tr '\n' ' ')" = "a-test b-test c-test d-test e-test " ] ||
	no "table not one sorted list of both boxes' tests"
sh tests/integration/summary.sh "$W/rows.1" >/dev/null 2>&1 && no "summary passed with a failed test"
printf '%s\n' "a-test PASS 12 1 " "d-test SKIP 0 1 " >"$W/ok"
sh tests/integration/summary.sh "$W/ok" >/dev/null || no "summary failed with only a pass and a skip"
printf '%s\n' "d-test SKIP 0 1 " >"$W/skip"
sh tests/integration/summary.sh "$W/skip" >/dev/null && no "summary passed with nothing passed"
[ $bad = 0 ] && echo "check-shards: ok"
exit $bad
