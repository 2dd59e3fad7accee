#!/bin/sh
# Inside the guest (busybox sh): the bench-guest-io jobs with fio, from the
# read-only tools disk mounted at $1 (fio and its libraries as the host has
# them, run through the bundled loader), on the raw device $2, $3 seconds
# each. One line per job: "NAME iops=N mbps=M" (tests/bench/guest_io.sh).
# O_DIRECT and libaio: the guest's page cache stays out of the figures.
# Random and sequential jobs stay in the first 512 MiB (random data in the
# base); the fdatasync job writes the 16 MiB after it.
t=$1 dev=$2 secs=$3
fio() {
	"$t/lib/ld-linux-x86-64.so.2" --library-path "$t/lib" "$t/bin/fio" --thread \
		--filename="$dev" --direct=1 --time_based --runtime="$secs" \
		--output-format=terse --terse-version=3 "$@"
}
# job NAME RW BS IODEPTH [fio options...]
job() {
	name=$1 rw=$2 bs=$3 qd=$4
	shift 4
	out=$(fio --name="$name" --rw="$rw" --bs="$bs" --iodepth="$qd" "$@") || {
		echo "fio $name failed: $out" >&2
		return 1
	}
	# Terse v3: field 7/8 read KiB/s and IOPS, 48/49 write KiB/s and IOPS.
	echo "$out" | awk -F';' -v n="$name" '$3 == n {
		r = $8 + $49; kb = $7 + $48
		printf "%s iops=%.0f mbps=%.2f\n", n, r, kb / 1024 }'
}
job randread-4k-qd1 randread 4k 1 --ioengine=libaio --size=512M &&
job randread-4k-qd32 randread 4k 32 --ioengine=libaio --size=512M &&
job seqread-1m read 1M 1 --ioengine=libaio --size=512M &&
job randwrite-4k-qd1 randwrite 4k 1 --ioengine=libaio --size=512M &&
job randwrite-4k-qd32 randwrite 4k 32 --ioengine=libaio --size=512M &&
job seqwrite-1m write 1M 1 --ioengine=libaio --size=512M &&
job fsync-4k write 4k 1 --ioengine=psync --fdatasync=1 --offset=512M --size=16M
