#!/bin/sh
# shards.sh N — the integration suite in N nested boxes at once.
#
# A box is a 2-vCPU machine that keeps two cores busy, so this pays on
# machines with 4 cores or more (tests/run-integration.sh's default: one
# box per two cores). Each box runs run-all.sh on its share of the tests (balanced by
# tests/integration/durations.txt, longest first onto the least loaded box)
# with its own progress, retries and fresh boxes, exactly as a single box
# does. Their output streams with a "[box K] " prefix; at the end
# summary.sh prints one table of every test (each box's rows, from
# MVM_TEST_ROWS on the shared checkout) and the one "integration:" line.
# Called by tests/run-integration.sh when the box is needed (MVM_TEST_BOXES).
# shards.sh --plan N prints the plan only ("K NAME": box K runs NAME).
set -u
cd "$(dirname "$0")/../.."
plan_only=0
[ "${1:-}" = --plan ] && { plan_only=1; shift; }
n=${1:-}
case $n in '' | *[!0-9]* | 0) echo "usage: shards.sh [--plan] N (N >= 1)" >&2; exit 2 ;; esac
here=tests/nested
cache="${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}/nested"

# plan: longest first onto the least loaded box (LPT), "K NAME" lines.
plan() {
	sh tests/integration/run-all.sh --list | awk -v n="$n" '
	FILENAME == ARGV[1] { if ($1 !~ /^#/) w[$1] = $2; next }
	{ name[++m] = $1; s[m] = ($1 in w) ? w[$1] : 60 }
	END {
		for (i = 1; i <= m; i++)	# selection sort: sixty names
			for (j = i + 1; j <= m; j++)
				if (s[j] > s[i]) { t = s[i]; s[i] = s[j]; s[j] = t; t = name[i]; name[i] = name[j]; name[j] = t }
		for (i = 1; i <= m; i++) {
			k = 1
			for (b = 2; b <= n; b++) if (load[b] < load[k]) k = b
			load[k] += s[i]; print k, name[i]
		}
	}' tests/integration/durations.txt -
}
if [ $plan_only = 1 ]; then plan; exit; fi

mkdir -p build && dir=$(mktemp -d "$PWD/build/shards.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
trap 'kill 0 2>/dev/null; exit 130' INT TERM
plan >"$dir/plan" || exit 2

# The boxes need their kernel and initramfs once, not once each.
"$here/box.sh" prepare >/dev/null || exit 2
# One runner holds the machine's box lock for all its boxes (box.sh's own
# lock would let only one of them start).
if [ "${MVM_NESTED_LOCK:-1}" = 1 ] && command -v flock >/dev/null; then
	exec 9>"$cache/box.lock"
	if ! flock -n 9; then
		echo "nested: another nested box is running on this machine; waiting for it (MVM_NESTED_LOCK=0 skips)" >&2
		flock 9
	fi
fi

k=0
while [ $k -lt "$n" ]; do
	k=$((k + 1))
	names=$(awk -v k=$k '$1 == k { printf "%s%s", sep, $2; sep = "|" }' "$dir/plan")
	[ -n "$names" ] || continue
	echo "nested: box $k of $n runs: $(echo "$names" | tr '|' ' ')"
	(
		MVM_TEST_FILTER="^($names)\$" MVM_TEST_ROWS="$dir/rows.$k" \
			MVM_NESTED_LOCK=0 MVM_NESTED_TAG=$k \
			"$here/box.sh" run tests/integration/run-all.sh 2>&1
		echo $? >"$dir/rc.$k"
	) | sed -u "s/^/[box $k] /" &
done
wait

# A box that gave up (its runner's "infrastructure failure") left no rows:
# its tests count as failed, named here.
k=0 rc=0
while [ $k -lt "$n" ]; do
	k=$((k + 1))
	grep -q "^$k " "$dir/plan" || continue
	r=$(cat "$dir/rc.$k" 2>/dev/null || echo "?")
	[ "$r" = 0 ] || { echo "nested: box $k ended with status $r"; rc=1; }
	[ -f "$dir/rows.$k" ] || : >"$dir/rows.$k"
	awk -v k=$k '$1 == k { print $2 }' "$dir/plan" | while read -r t; do
		grep -q "^$t " "$dir/rows.$k" ||
			echo "$t LOST - 1 box $k ended (status $r) before it ran" >>"$dir/rows.$k"
	done
done
sh tests/integration/summary.sh "$dir"/rows.* || rc=1
exit $rc
