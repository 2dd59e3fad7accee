# Shared helpers for integration tests. Each test is a script run from the
# repository root; exit 0 = pass, 77 = skip, anything else = fail.
set -eu
MVM=${MVM:-build/mvm}
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-it.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL: $*" >&2
	# What the last run_mvm printed on stderr says why (CI shows only this).
	if [ -s "$T/err" ]; then
		echo "  last mvm stderr:" >&2
		tail -n 8 "$T/err" | sed 's/^/  | /' >&2
	fi
	# A guest CPU that triple-faulted (the VMM's words in a sandbox's
	# console.log or events.jsonl) is named: run-all.sh retries such a
	# test once inside the emulated nested box, and only there.
	if grep -rqs --include='*.log' --include='*.jsonl' --include=err --include='*.err' 'triple-faulted (KVM_EXIT_SHUTDOWN)' "$T"; then
		echo "  GUEST-TRIPLE-FAULT: a guest vCPU triple-faulted during this test" >&2
	fi
	guest_news
	exit 1
}

# A guest whose agent went silent: what its kernel said (a lockup, a stall,
# an oops) and how its console ended. A guest kernel that reported a
# soft lockup or an RCU stall is named GUEST-STALL: inside the emulated box
# run-all.sh retries such a test once, as it does for a box stall.
guest_news() {
	for c in $(find "$T" -name console.log 2>/dev/null); do
		k=$(grep -E -a 'soft lockup|rcu: INFO|rcu_sched|self-detected stall|hung_task|BUG:|Oops|Kernel panic|general protection|watchdog' "$c" | head -n 6)
		[ -n "$k" ] || grep -qs 'cannot reach the agent\|lost the connection' "$T/err" || continue
		echo "  guest console $(basename "$(dirname "$c")"): kernel lines, then its tail" >&2
		[ -z "$k" ] || printf '%s\n' "$k" | sed 's/^/  | /' >&2
		tail -n 6 "$c" | sed 's/^/  | /' >&2
		printf '%s' "$k" | grep -Eq 'soft lockup|rcu: INFO|self-detected stall' &&
			echo "  GUEST-STALL: a guest kernel reported a stall during this test" >&2
	done
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# expect_match WHAT REGEX TEXT
expect_match() {
	printf '%s' "$3" | grep -Eq -- "$2" || fail "$1: '$3' does not match /$2/"
}

# run_mvm ARGS... : runs mvm, stdout to $T/out, stderr to $T/err, status in $rc
run_mvm() {
	rc=0
	"$MVM" "$@" >"$T/out" 2>"$T/err" || rc=$?
}
