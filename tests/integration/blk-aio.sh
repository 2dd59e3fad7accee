#!/bin/sh
# What fio's libaio jobs in make bench-guest-io do to a disk, as a test: a
# 2-vCPU guest keeps 32 O_DIRECT requests in flight (Linux AIO, refilled in
# batches: the guest adds many requests per kick and takes many completions
# per interrupt) on a qcow2 overlay over a raw base of random data, the
# disk given as `mvm run --disk FILE:qcow2` with the files on tmpfs (as the
# benchmark's are in the box). tests/integration/blk_aio.c writes random
# 4 KiB blocks over 448 MiB (each a copy-on-write of a 64 KiB cluster: the
# overlay grows by ~300 MiB, more than the sandbox's RAM + overhead), then
# mixes reads and writes, then reads back every block it wrote; no request
# may take longer than a deadline and every block must hold what was last
# written to it. Then the image passes qemu-img check.
#
# The defect it caught: the sandbox's cgroup capped memory at guest RAM +
# 256 MiB where the state directory was on disk, but a disk file on tmpfs
# is charged to the VMM's cgroup as the guest writes it and cannot be
# reclaimed: the kernel's OOM killer ended the VMM mid-run ("lost the
# connection to the guest agent", fio "stopped" at its QD32 jobs).
. tests/integration/lib.sh

S=$(mktemp -d /dev/shm/mvm-it.XXXXXX)
trap 'rm -rf "$T" "$S"' EXIT
gcc -std=gnu11 -D_GNU_SOURCE -O2 -static -o "$T/blk_aio" tests/integration/blk_aio.c ||
	fail "cannot build blk_aio"
head -c $((32 << 20)) /dev/urandom > "$S/base.raw"
qemu-img create -q -f qcow2 -o cluster_size=65536 -b base.raw -F raw "$S/ov.qcow2" 448M ||
	fail "qemu-img create"

# blk_aio DEV OPS QD SPAN_MIB STALL_S
rc=0
timeout 300 "$MVM" run --cpus 2 --memory 128M --disk "$S/ov.qcow2:qcow2" \
	--copy "$T/blk_aio:/blk_aio" -- /blk_aio /dev/vda 12000 32 448 30 >"$T/out" 2>"$T/err" || rc=$?
if [ "$rc" != 0 ]; then
	cat "$T/out" >&2
	dmesg 2>/dev/null | grep -iE 'out of memory|oom-kill' | tail -3 >&2
	fail "blk_aio at queue depth 32 ($rc)"
fi
expect_match "blk_aio" '^blk_aio: ok' "$(tail -1 "$T/out")"
qemu-img check -q "$S/ov.qcow2" || fail "qemu-img check after the run"
echo "blk-aio: ok"
