# Shared helpers for integration tests. Each test is a script run from the
# repository root; exit 0 = pass, 77 = skip, anything else = fail.
set -eu
MVM=${MVM:-build/mvm}
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-it.XXXXXX")
trap 'rm -rf "$T"' EXIT
# run-all.sh's time limit ends a test with SIGTERM: leave through the EXIT
# trap the test set, so its sandboxes, namespaces and servers go with it (a
# net test killed at its limit once left its namespace behind and failed
# every net test after it).
# Before leaving, say where the time went: the step that was running and
# how each guest's console ended (CI shows only the log's tail).
trap 'timed_out; exit 143' TERM
T0=$(date +%s)
timed_out() {
	echo "TIMEOUT: the suite's time limit ended this test $(( $(date +%s) - T0 )) s in, during: $(cat "$T/step" 2>/dev/null)" >&2
	for c in $(find "$T" -name console.log 2>/dev/null); do
		echo "  guest console $(basename "$(dirname "$c")"), its tail:" >&2
		grep -av 'Unhandled WRMSR' "$c" | tail -n 8 | sed 's/^/  | /' >&2
	done
	guest_resets
	if command -v fail_context >/dev/null 2>&1; then fail_context >&2 || true; fi
}

# node_client NAME: the node test client tests/NAME/ (its .mjs scripts and
# the node_modules that `make NAME-client` packs into tests/NAME/node_modules.tar)
# unpacked into $T/node-NAME; prints that directory. node reads thousands of
# small files at start, and in the emulated test box the checkout is a 9p
# share: Verdaccio took 160-340 s to start from it and 10-23 s from the
# box's tmpfs (docs/dev-image.md). Readable by every user: browser-cdp runs
# the client as another uid too.
node_client() {
	nc_tar=tests/$1/node_modules.tar nc_dir=$T/node-$1
	[ -f "$nc_tar" ] || fail "$nc_tar is missing: run 'make $1-client' (npm ci in tests/$1)"
	if [ ! -d "$nc_dir" ]; then
		mkdir -p "$nc_dir.tmp" && tar -xf "$nc_tar" -C "$nc_dir.tmp" &&
			cp tests/$1/*.mjs tests/$1/package.json "$nc_dir.tmp/" &&
			chmod -R a+rX "$nc_dir.tmp" && chmod 711 "$T" && mv "$nc_dir.tmp" "$nc_dir" ||
			fail "unpacking $nc_tar"
	fi
	echo "$nc_dir"
}

fail() {
	echo "FAIL: $*" >&2
	# A test whose world has more to say than mvm's stderr (a Slurm
	# cluster's queue and logs: tests/cluster/slurm.sh) defines
	# fail_context; its words come with every failure and timeout, so
	# one run explains itself.
	if command -v fail_context >/dev/null 2>&1; then fail_context >&2 || true; fi
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
	guest_resets
	exit 1
}

# A guest that reset on its own while the test ran: a "stopped" event with
# outcome reboot or panic and no "stopping" (what `mvm stop`, `rm -f` and
# the end of `mvm run` write first) since the VMM's last "started". Named
# GUEST-RESET with the console lines just before the reset: run-all.sh
# counts it as "a guest reset" (never as the box's), so a reboot inside
# the guest or a guest panic shows as what it is, not as a timeout. A
# triple fault is GUEST-TRIPLE-FAULT above. Last in fail's output: the
# runner prints only the tail of a retried attempt.
guest_resets() {
	for e in $(find "$T" -name events.jsonl 2>/dev/null); do
		r=$(awk '
			/"type":"started"/ { asked = 0 }
			/"type":"(stopping|killed)"/ { asked = 1 }
			/"type":"stopped"/ && /"outcome":"(reboot|panic)"/ && !/triple-faulted/ && !asked { last = $0 }
			END { if (last != "") print last }' "$e")
		[ -n "$r" ] || continue
		echo "  GUEST-RESET: sandbox $(basename "$(dirname "$e")") reset on its own (no mvm stop asked): $r" >&2
		c=$(dirname "$e")/console.log
		[ -s "$c" ] || continue
		echo "  its console before the reset:" >&2
		grep -av 'Unhandled WRMSR' "$c" |
			awk '{ l[NR] = $0 } /Restarting system|Kernel panic|triple-faulted|mvm vmm:/ { n = NR }
				END { if (!n) n = NR; for (i = n - 7 > 1 ? n - 7 : 1; i <= n; i++) print l[i] }' |
			cut -c1-200 | sed 's/^/  | /' >&2
	done
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

# step TEXT: note the step now running (its time since the test began).
step() {
	printf '%s\n' "+$(( $(date +%s) - T0 ))s: $(printf '%s' "$*" | cut -c1-120)" | tee "$T/step" >&2
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
# Each step is logged with its start time, so a slow or stuck test shows
# which step took the time.
run_mvm() {
	rc=0
	step "mvm $*"
	"$MVM" "$@" >"$T/out" 2>"$T/err" || rc=$?
}
