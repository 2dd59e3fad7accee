#!/bin/sh
# `mvm image import` of a 200 MiB OCI image against what a user would do
# by hand with Debian's tools: `umoci unpack` then `mkfs.ext4 -d` of the
# unpacked rootfs into an image of the same size. The image: busybox-static
# plus a reproducible 200 MiB tree (tests/bench/gen_tree.py, ~3000 files,
# random bytes), two gzip layers made by umoci. Rounds alternate the two
# tools; the median of $REPS rounds each, in one run. mvm's side checks
# every digest and the diff_ids and sets owners through debugfs; umoci's
# side checks the digests too.
# Usage: tests/bench/import.sh [BUILD_DIR]   (env: MIB, REPS, TMPDIR)
set -eu
BUILD=${1:-build}
MIB=${MIB:-200}
REPS=${REPS:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
case "$BUILD" in /*) MVM=$BUILD/mvm ;; *) MVM=$top/$BUILD/mvm ;; esac
for t in umoci mkfs.ext4 python3; do
	command -v $t >/dev/null || { echo "bench-import: $t missing (tools/deps.sh)" >&2; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-bench-import.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
export MVM_IMAGE_DIR="$T/store"

echo "bench-import: building a ${MIB} MiB image (umoci, two gzip layers)..."
umoci init --layout "$T/L" >/dev/null
umoci new --image "$T/L:b" >/dev/null
umoci unpack --rootless --image "$T/L:b" "$T/b" >/dev/null
mkdir -p "$T/b/rootfs/bin"
cp /bin/busybox "$T/b/rootfs/bin/"
umoci repack --image "$T/L:b" "$T/b" >/dev/null
rm -rf "$T/b"
umoci unpack --rootless --image "$T/L:b" "$T/b" >/dev/null
python3 tests/bench/gen_tree.py "$T/b/rootfs/srv/tree" "$MIB"
umoci repack --image "$T/L:b" "$T/b" >/dev/null
rm -rf "$T/b"
echo "bench-import: layout $(du -sm "$T/L" | cut -f1) MiB compressed"

now() { date +%s.%N; }
mvm_round() {
	t0=$(now)
	"$MVM" image import "oci:$T/L:b" --name bench --force >/dev/null
	t1=$(now)
	echo "$t1 - $t0" | bc
}
umoci_round() {
	rm -rf "$T/u" "$T/u.img"
	t0=$(now)
	umoci unpack --rootless --image "$T/L:b" "$T/u" >/dev/null
	truncate -s "$size" "$T/u.img"
	mkfs.ext4 -q -F -d "$T/u/rootfs" "$T/u.img"
	t1=$(now)
	echo "$t1 - $t0" | bc
}
"$MVM" image import "oci:$T/L:b" --name bench >/dev/null	# warm the page cache
size=$(stat -c %s "$MVM_IMAGE_DIR/bench.ext4")
: > "$T/mvm.s"; : > "$T/umoci.s"
for i in $(seq "$REPS"); do
	mvm_round >> "$T/mvm.s"
	umoci_round >> "$T/umoci.s"
done
med() { sort -n "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
m=$(med "$T/mvm.s"); u=$(med "$T/umoci.s")
echo "bench-import: mvm image import: $(tr '\n' ' ' < "$T/mvm.s")s; umoci unpack + mkfs.ext4 -d: $(tr '\n' ' ' < "$T/umoci.s")s"
printf '| bench-import, %s MiB OCI image to a bootable ext4 (median of %s) | %.2f s | umoci unpack + mkfs.ext4 -d %.2f s | %.2fx time |\n' \
	"$MIB" "$REPS" "$m" "$u" "$(echo "$m / $u" | bc -l)"
