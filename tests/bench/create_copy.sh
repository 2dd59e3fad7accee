#!/bin/sh
# create_copy.sh MVM_A MVM_B [ROUNDS]: wall time of `mvm create NAME --copy TREE:/data/`
# for a 200 MiB tree (tests/bench/gen_tree.py), two builds interleaved round by
# round (A B, B A, ...) so drift in a noisy box hits both alike; medians and B/A.
# Needs KVM: run it through tests/nested/maybe-nested.sh. Both builds boot the
# same guest (MVM_GUEST_DIR, default build/guest). Beside the wall time, the
# CPU time (user+sys) of the `mvm create` process itself: the host-side work
# (walking, hashing and streaming the tree), without the VMM's guest time.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 MVM_A MVM_B [ROUNDS]" >&2; exit 2; }
A=$(realpath "$1") B=$(realpath "$2") ROUNDS=${3:-3}
export MVM_GUEST_DIR=${MVM_GUEST_DIR:-$(realpath build/guest)}
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-bench.XXXXXX")
export MVM_STATE_DIR="$T/state"
trap 'rm -rf "$T"' EXIT
python3 "$(dirname "$0")/gen_tree.py" "$T/tree" "${MIB:-200}"

ms() { r=$(cat /proc/uptime); echo "${r%% *}" | awk '{printf "%d", $1 * 1000}'; }

# one BIN LABEL ROUND: create, time it, remove; prints "LABEL ms cpu-ms".
one() {
	n="b$3-$2"
	t0=$(ms)
	if ! /usr/bin/time -o "$T/cpu" -f "%U %S" "$1" create "$n" --copy "$T/tree:/data/" \
	     >"$T/out" 2>&1; then
		cat "$T/out" >&2
		"$1" logs "$n" 2>/dev/null | tail -20 >&2
		exit 1
	fi
	t1=$(ms)
	"$1" rm -f "$n" >/dev/null
	cpu=$(awk '{printf "%d", ($1 + $2) * 1000}' "$T/cpu")
	echo "$2 $((t1 - t0)) $cpu" | tee -a "$T/times"
}

i=1
while [ "$i" -le "$ROUNDS" ]; do
	if [ $((i % 2)) = 1 ]; then one "$A" A "$i"; one "$B" B "$i"
	else one "$B" B "$i"; one "$A" A "$i"; fi
	i=$((i + 1))
done
# median LABEL FIELD: field 2 is the wall time, 3 the CPU time.
median() { grep "^$1 " "$T/times" | cut -d' ' -f"${2:-2}" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ma=$(median A) mb=$(median B)
echo "create --copy ${MIB:-200} MiB, $ROUNDS rounds: A median $ma ms, B median $mb ms, B/A $(echo "$mb $ma" | awk '{printf "%.3f", $1 / $2}')"
ca=$(median A 3) cb=$(median B 3)
echo "create's own CPU time: A median $ca ms, B median $cb ms, B/A $(echo "$cb $ca" | awk '{printf "%.3f", $1 / $2}')"
echo "A all (wall cpu): $(grep '^A ' "$T/times" | cut -d' ' -f2,3 | tr '\n' ' ')"
echo "B all (wall cpu): $(grep '^B ' "$T/times" | cut -d' ' -f2,3 | tr '\n' ' ')"
