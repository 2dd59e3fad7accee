#!/bin/sh
# Inside the guest (busybox sh): bench-count's disk workload (tests/bench/count.sh).
# From the read-only tools disk mounted at $1 (fio and its libraries, run
# through the bundled loader), on the raw device $2: $3 4K random writes at
# QD1 (libaio, O_DIRECT; allocating: each lands in a 64 KiB cluster of the
# qcow2 overlay not yet written), then $4 4K writes with an fdatasync each
# (psync, in the 16 MiB after the first 512 MiB). fio's offsets come from its
# fixed seed, so every VMM sees the same requests. A count of 1 is the
# baseline (fio's own start-up); the host takes the difference.
t=$1 dev=$2 a=$3 b=$4
fio() {
	"$t/lib/ld-linux-x86-64.so.2" --library-path "$t/lib" "$t/bin/fio" --thread \
		--filename="$dev" --direct=1 --output-format=terse --terse-version=3 "$@" >/dev/null
}
fio --name=randwrite --rw=randwrite --bs=4k --iodepth=1 --ioengine=libaio --size=512M \
	--number_ios="$a" &&
fio --name=fsync --rw=write --bs=4k --iodepth=1 --ioengine=psync --fdatasync=1 \
	--offset=512M --size=16M --number_ios="$b"
