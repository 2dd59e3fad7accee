#!/bin/sh
# make bench-exec: latency of `mvm exec NAME true` (p50/p99 over N runs) and
# `mvm cp` throughput of a 256 MiB file into and out of a sandbox.
# Runs where /dev/kvm works (tests/nested/maybe-nested.sh picks the place);
# under the nested box everything is emulated: compare numbers within a run.
set -eu
cd "$(dirname "$0")/../.."
MVM=${MVM:-build/mvm}
N=${MVM_BENCH_EXEC_N:-50}
SIZE_MIB=${MVM_BENCH_CP_MIB:-256}
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-bench.XXXXXX")
export MVM_STATE_DIR="$T/state"
trap '"$MVM" rm -f bench >/dev/null 2>&1; rm -rf "$T"' EXIT

now() { date +%s.%N; }
# since START [SCALE]: seconds (times SCALE) since START
since() { awk -v a="$1" -v b="$(now)" -v k="${2:-1}" 'BEGIN { printf "%.3f", (b - a) * k }'; }
rate() { awk -v m="$1" -v d="$2" 'BEGIN { printf "%.1f", m / d }'; }

t0=$(now)
"$MVM" create bench --memory 512M --disk-size $((SIZE_MIB * 3))M >/dev/null
echo "create (boot to agent ready): $(since "$t0") s"

"$MVM" exec bench -- true	# warm-up
: > "$T/lat"
i=0
while [ $i -lt "$N" ]; do
	s=$(now)
	"$MVM" exec bench -- true
	since "$s" 1000 >> "$T/lat"
	echo >> "$T/lat"
	i=$((i + 1))
done
sort -n "$T/lat" > "$T/lat.sorted"
pct() { awk -v p="$1" '{ v[NR] = $1 } END { i = int((NR - 1) * p / 100) + 1; printf "%.1f", v[i] }' "$T/lat.sorted"; }
echo "exec true: n=$N p50=$(pct 50) ms p99=$(pct 99) ms min=$(pct 0) ms"

head -c $((SIZE_MIB * 1048576)) /dev/urandom > "$T/blob"
s=$(now)
"$MVM" cp "$T/blob" bench:/data/blob
d=$(since "$s")
echo "cp in  ${SIZE_MIB} MiB: $d s, $(rate "$SIZE_MIB" "$d") MiB/s"
mkdir "$T/out"
s=$(now)
"$MVM" cp bench:/data/blob "$T/out/"
d=$(since "$s")
echo "cp out ${SIZE_MIB} MiB: $d s, $(rate "$SIZE_MIB" "$d") MiB/s"
cmp "$T/blob" "$T/out/blob" && echo "round trip: identical"
