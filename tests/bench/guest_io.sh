#!/bin/sh
# make bench-guest-io: disk throughput as the guest sees it, mvm beside QEMU
# microvm in one run: same kernel, same initramfs and guest command, each
# run on a fresh qcow2 overlay (made by qemu-img) over the same raw base of
# random data, cache=writeback on both (QEMU: aio=threads; mvm: page cache).
# The guest runs fio (tests/bench/fio_jobs.sh: the host's fio and its
# libraries on a read-only ext4 tools disk, through the bundled loader;
# libaio, O_DIRECT on the raw device) for 4K random read/write at QD1 and
# QD32, 1M sequential read and write, and 4K write + fdatasync. Rounds
# alternate mvm and QEMU; medians per job, ratios mvm/QEMU.
# Env: MVM_BENCH_RUNS (3), MVM_BENCH_IO_SECS (4 per job).
set -eu
MVM=${MVM:-build/mvm}
GUEST=${MVM_GUEST_DIR:-$(dirname "$MVM")/guest}
RUNS=${MVM_BENCH_RUNS:-3}
SECS=${MVM_BENCH_IO_SECS:-4}
. tests/bench/microvm.lib
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-bench-io.XXXXXX")
trap 'rm -rf "$T"' EXIT

command -v fio >/dev/null || { echo "bench-guest-io: fio missing (sudo apt-get install fio)" >&2; exit 1; }
mkdir -p "$T/tools/bin" "$T/tools/lib"
cp "$(command -v fio)" "$T/tools/bin/fio"
cp tests/bench/fio_jobs.sh "$T/tools/fio_jobs.sh"
# Every library fio links (and the loader), as this host has them.
ldd "$(command -v fio)" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r lib; do cp -L "$lib" "$T/tools/lib/"; done
[ -f "$T/tools/lib/ld-linux-x86-64.so.2" ] || { echo "bench-guest-io: no loader in fio's ldd" >&2; exit 1; }
mkfs.ext4 -q -d "$T/tools" -L mvmbench "$T/tools.ext4" $(( $(du -sm "$T/tools" | cut -f1) + 32 ))M
# 512 MiB for the jobs plus the fsync job's 16 MiB after it.
head -c $((544 << 20)) /dev/urandom > "$T/base.raw"

# The target is the big disk, whichever name it got.
CMD="for d in vda vdb; do if [ \$(cat /sys/block/\$d/size) -gt 1000000 ]; then t=\$d; else l=\$d; fi; done
mkdir -p /t && mount -o ro /dev/\$l /t && sh /t/fio_jobs.sh /t /dev/\$t $SECS; echo bench-rc=\$?"
"$MVM" run --save-initrd "$T/q.cpio" -- sh -c "$CMD"

overlay() {
	rm -f "$T/ov.qcow2"
	qemu-img create -q -f qcow2 -o cluster_size=65536 -b base.raw -F raw "$T/ov.qcow2"
}

# check FILE WHO: the guest's job lines, or fail
check() {
	grep -q 'bench-rc=0' "$1" || { echo "bench-guest-io: $2 run failed:" >&2; tail -20 "$1" >&2; exit 1; }
	grep -E '^[a-z0-9-]+ iops=' "$1" | tr -d '\r' | sed "s/^/$2 /" >> "$T/all"
}

mvm_run() {
	overlay
	timeout 900 "$MVM" run --memory 256M --disk "$T/ov.qcow2:qcow2" --disk "$T/tools.ext4:ro" \
		-- sh -c "$CMD" > "$T/m.out" 2>&1 || true
	check "$T/m.out" mvm
}

qemu_run() {
	overlay
	qemu_microvm 900 "$T/q.out" "$T/q.cpio" \
		-drive "file=$T/ov.qcow2,format=qcow2,if=none,id=d0,cache=writeback,aio=threads" \
		-device virtio-blk-device,drive=d0 \
		-drive "file=$T/tools.ext4,format=raw,if=none,id=d1,readonly=on" \
		-device virtio-blk-device,drive=d1
	check "$T/q.out" qemu
}

: > "$T/all"
for i in $(seq "$RUNS"); do
	mvm_run; qemu_run
	echo "round $i done" >&2
done
cp "$T/all" "${MVM_BENCH_IO_RAW:-/dev/null}" 2>/dev/null || true
# Medians per VMM and job; every round's figure listed for the spread.
awk '
	# Sequential jobs in MiB/s, the others in IOPS.
	{ split($3 ~ /^iops/ && $2 !~ /^seq/ ? $3 : $4, a, "="); k = $1 " " $2
	  v[k, ++n[k]] = a[2]; if (!(($2) in seen)) { seen[$2] = 1; name[++no] = $2 } }
	function med(k,   i, j, t, m, s) {
		m = n[k]; for (i = 1; i <= m; i++) s[i] = v[k, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
		return m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
	}
	function all(k,   i, o) { o = ""; for (i = 1; i <= n[k]; i++) o = o (i > 1 ? "/" : "") v[k, i]; return o }
	END {
		printf "%-20s %10s %10s %8s   %s\n", "job (median)", "mvm", "qemu", "mvm/qemu", "rounds: mvm | qemu"
		for (i = 1; i <= no; i++) {
			j = name[i]; m = med("mvm " j); q = med("qemu " j)
			printf "%-20s %10.1f %10.1f %7.2fx   %s | %s %s\n", j, m, q, q ? m / q : 0,
				all("mvm " j), all("qemu " j), j ~ /^seq/ ? "MiB/s" : "IOPS"
			r[j] = m
		}
		printf "\nmvm QD32/QD1: randread %.2fx, randwrite %.2fx\n",
			r["randread-4k-qd1"] ? r["randread-4k-qd32"] / r["randread-4k-qd1"] : 0,
			r["randwrite-4k-qd1"] ? r["randwrite-4k-qd32"] / r["randwrite-4k-qd1"] : 0
	}' "$T/all"
