#!/bin/sh
# Benchmark mvm's qcow2 layer (tests/bench/qcow2_bench.c) against
# `qemu-img bench` on identical overlays: same base, same cluster size,
# same request stream, page cache on both sides (cache=writeback), no
# flush per request. "Random" 4 KiB I/O is qemu-img bench's strided
# pattern with a large odd step, which visits offsets in scattered order;
# both tools get the identical sequence. Best of $REPS runs each.
# Usage: tests/bench/image.sh [BUILD_DIR]   (env: BENCH_MB, REPS, TMPDIR)
set -eu
BUILD=${1:-build}
MB=${BENCH_MB:-256}
REPS=${REPS:-3}
CC=${CC:-gcc}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

mkdir -p "$BUILD/bench"
$CC -std=gnu11 -O2 -I. -D_GNU_SOURCE -o "$BUILD/bench/qcow2_bench" \
	tests/bench/qcow2_bench.c "$BUILD/libmvm.a" -lpthread
case "$BUILD" in /*) MVM_BENCH=$BUILD/bench/qcow2_bench ;; *) MVM_BENCH=$top/$BUILD/bench/qcow2_bench ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/mvm-bench-image.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work"

SIZE=$((MB << 20))
STEP=$((4096 * 40503))		# odd multiple of 4 KiB: a permutation of offsets
N4K=${BENCH_N4K:-100000}
NALLOC=$((SIZE / 65536 * 4))	# allocating writes: ~4 per cluster

echo "preparing a ${MB} MiB raw base and overlays (64 KiB clusters)..."
head -c "$SIZE" /dev/urandom > base.raw
fresh() { rm -f "$1"; qemu-img create -q -f qcow2 -o cluster_size=65536 -b base.raw -F raw "$1"; }
fresh full.qcow2
qemu-img bench -q -w -f qcow2 -s 1048576 -c "$MB" full.qcow2 >/dev/null

# secs TOOL FLAGS...: run once on the right image, print seconds.
secs() {
	tool=$1; shift
	img=full.qcow2
	case "$*" in *fresh*) fresh f.qcow2; img=f.qcow2 ;; esac
	case "$*" in *-w*) [ "$img" = full.qcow2 ] && { cp --sparse=always full.qcow2 w.qcow2; img=w.qcow2; } ;; esac
	flags=$(echo "$*" | sed 's/fresh//')
	# Warm cache, nothing under writeback: measure the layer, not the flusher.
	sync "$img"
	cat base.raw "$img" > /dev/null
	case "$tool" in
	q1) out=$(qemu-img bench -f qcow2 -d 1 $flags "$img") ;;
	q64) out=$(qemu-img bench -f qcow2 -d 64 $flags "$img") ;;
	mvm) out=$("$MVM_BENCH" $flags "$img") ;;
	esac
	echo "$out" | sed -n 's/.*Run completed in \([0-9.]*\) seconds.*/\1/p'
}

best() {
	b=
	i=0
	while [ $i -lt "$REPS" ]; do
		s=$(secs "$@")
		b=$(awk -v a="$b" -v s="$s" 'BEGIN { print (a == "" || s < a) ? s : a }')
		i=$((i + 1))
	done
	echo "$b"
}

printf '\n%-34s %12s %12s %12s %9s %9s\n' test "qemu-img d1" "qemu-img d64" mvm "mvm/d1" "mvm/d64"
row() {
	name=$1 unit=$2 count=$3 bs=$4; shift 4
	q1=$(best q1 -c "$count" -s "$bs" "$@")
	q64=$(best q64 -c "$count" -s "$bs" "$@")
	m=$(best mvm -c "$count" -s "$bs" "$@")
	awk -v n="$name" -v u="$unit" -v c="$count" -v bs="$bs" -v a="$q1" -v b="$q64" -v m="$m" 'BEGIN {
		f = (u == "IOPS") ? c : c * bs / 1048576
		printf "%-34s %7.0f %-4s %7.0f %-4s %7.0f %-4s %8.2fx %8.2fx\n", n,
		       f / a, u, f / b, u, f / m, u, a / m, b / m }'
}
row "rand 4K read, allocated clusters" IOPS "$N4K" 4096 -S "$STEP"
row "rand 4K read, via raw backing" IOPS "$N4K" 4096 -S "$STEP" fresh
row "rand 4K write, allocated (in place)" IOPS "$N4K" 4096 -S "$STEP" -w
row "rand 4K write, allocating (COW)" IOPS "$NALLOC" 4096 -S "$STEP" -w fresh
row "seq 1M read, allocated" MiB/s $((MB * 2)) 1048576
row "seq 1M write, allocating" MiB/s "$MB" 1048576 -w fresh
echo
echo "settings: ${MB} MiB disk, 64 KiB clusters, raw base, cache=writeback (host page"
echo "cache, files pre-read), no flush per request; qemu-img bench -i threads at"
echo "queue depth 1 and 64; mvm is synchronous (depth 1). Neither timing includes"
echo "the flush on close (qemu-img bench does not time it). 4K step ${STEP} B;"
echo "best of ${REPS} runs."
