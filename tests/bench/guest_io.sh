#!/bin/sh
# make bench-guest-io: disk throughput as the guest sees it, mvm beside QEMU
# microvm in one run: same kernel, same initramfs and guest command, each
# run on a fresh qcow2 overlay (made by qemu-img) over the same raw base,
# cache=writeback on both (QEMU: aio=threads; mvm: page cache).
# Two workloads, each its own boot:
# - fio (tests/bench/fio_jobs.sh: the host's fio and its libraries on a
#   read-only ext4 tools disk, through the bundled loader; libaio, O_DIRECT
#   on the raw device, a base of random data) for 4K random read/write at
#   QD1 and QD32, 1M sequential read and write, and 4K write + fdatasync;
# - install (tests/bench/apt_install.sh): apt-get install of a fixed set of
#   packages, timed in the guest, into the store's debian image (the base)
#   from a flat file: repository on the same read-only tools disk
#   (MVM_BENCH_APT_REPO, made on the host by tests/bench/apt_repo.sh).
# Rounds alternate mvm and QEMU; medians per job, ratios mvm/QEMU per round
# and of the medians.
# Env: MVM_BENCH_RUNS (3), MVM_BENCH_IO_SECS (4 per fio job),
# MVM_BENCH_WORKLOADS ("fio install"), MVM_IMAGE_DIR (the debian image).
set -eu
MVM=${MVM:-build/mvm}
GUEST=${MVM_GUEST_DIR:-$(dirname "$MVM")/guest}
RUNS=${MVM_BENCH_RUNS:-3}
SECS=${MVM_BENCH_IO_SECS:-4}
WORKLOADS=${MVM_BENCH_WORKLOADS:-fio install}
IMAGE=${MVM_IMAGE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mvm/images}/debian.ext4
. tests/bench/microvm.lib
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-bench-io.XXXXXX")
trap 'rm -rf "$T"' EXIT

command -v fio >/dev/null || { echo "bench-guest-io: fio missing (sudo apt-get install fio)" >&2; exit 1; }
mkdir -p "$T/tools/bin" "$T/tools/lib"
cp "$(command -v fio)" "$T/tools/bin/fio"
cp tests/bench/fio_jobs.sh tests/bench/apt_install.sh "$T/tools/"
case " $WORKLOADS " in *" install "*)
	[ -f "${MVM_BENCH_APT_REPO:-}/Packages" ] ||
		{ echo "bench-guest-io: MVM_BENCH_APT_REPO is not a repository (make bench-guest-io makes it)" >&2; exit 1; }
	cp -r "$MVM_BENCH_APT_REPO" "$T/tools/repo"
	# The base on the same filesystem as the fio one (tmpfs in the box), not
	# read through the box's 9p share during the rounds.
	cp --sparse=always "$IMAGE" "$T/debian.raw"
esac
# Every library fio links (and the loader), as this host has them.
ldd "$(command -v fio)" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r lib; do cp -L "$lib" "$T/tools/lib/"; done
[ -f "$T/tools/lib/ld-linux-x86-64.so.2" ] || { echo "bench-guest-io: no loader in fio's ldd" >&2; exit 1; }
mkfs.ext4 -q -d "$T/tools" -L mvmbench "$T/tools.ext4" $(( $(du -sm "$T/tools" | cut -f1) + 32 ))M
# 512 MiB for the jobs plus the fsync job's 16 MiB after it.
case " $WORKLOADS " in *" fio "*) head -c $((544 << 20)) /dev/urandom > "$T/base.raw" ;; esac

# guest_cmd SCRIPT ARGS: the guest command that runs a workload from the
# tools disk. The target is the big disk, whichever name it got.
guest_cmd() {
	echo "for d in vda vdb; do if [ \$(cat /sys/block/\$d/size) -gt 1000000 ]; then t=\$d; else l=\$d; fi; done
mkdir -p /t && mount -o ro /dev/\$l /t && sh /t/$1 /t /dev/\$t $2; echo bench-rc=\$?"
}
CMD_fio=$(guest_cmd fio_jobs.sh "$SECS")
CMD_install=$(guest_cmd apt_install.sh "")
BASE_fio=base.raw BASE_install=debian.raw
for w in $WORKLOADS; do
	eval "cmd=\$CMD_$w"
	"$MVM" run --save-initrd "$T/q-$w.cpio" -- sh -c "$cmd"
done

# overlay BASE: a fresh qcow2 overlay over $T/BASE
overlay() {
	rm -f "$T/ov.qcow2"
	qemu-img create -q -f qcow2 -o cluster_size=65536 -b "$1" -F raw "$T/ov.qcow2"
}

# check FILE WHO: the guest's job lines, or fail
check() {
	grep -q 'bench-rc=0' "$1" || { echo "bench-guest-io: $2 run failed:" >&2; tail -20 "$1" >&2; exit 1; }
	grep -E '^[a-z0-9-]+ (iops|secs)=' "$1" | tr -d '\r' | sed "s/^/$2 /" >> "$T/all"
}

# mvm_run WORKLOAD, qemu_run WORKLOAD
mvm_run() {
	eval "overlay \$BASE_$1; cmd=\$CMD_$1"
	timeout 900 "$MVM" run --memory 256M --disk "$T/ov.qcow2:qcow2" --disk "$T/tools.ext4:ro" \
		-- sh -c "$cmd" > "$T/m.out" 2>&1 || true
	check "$T/m.out" mvm
}

qemu_run() {
	eval "overlay \$BASE_$1"
	qemu_microvm 900 "$T/q.out" "$T/q-$1.cpio" \
		-drive "file=$T/ov.qcow2,format=qcow2,if=none,id=d0,cache=writeback,aio=threads" \
		-device virtio-blk-device,drive=d0 \
		-drive "file=$T/tools.ext4,format=raw,if=none,id=d1,readonly=on" \
		-device virtio-blk-device,drive=d1
	check "$T/q.out" qemu
}

: > "$T/all"
for i in $(seq "$RUNS"); do
	for w in $WORKLOADS; do mvm_run "$w"; qemu_run "$w"; done
	echo "round $i done" >&2
done
cp "$T/all" "${MVM_BENCH_IO_RAW:-/dev/null}" 2>/dev/null || true
# Medians per VMM and job; every round's figure listed for the spread, and
# each round's mvm/QEMU ratio (rounds paired in the order they ran).
awk '
	# Sequential jobs in MiB/s, the install in seconds, the others in IOPS.
	{ f = $3 ~ /^secs=/ || ($3 ~ /^iops=/ && $2 !~ /^seq/) ? $3 : $4
	  split(f, a, "="); k = $1 " " $2
	  v[k, ++n[k]] = a[2]; if (!(($2) in seen)) { seen[$2] = 1; name[++no] = $2 } }
	function med(k,   i, j, t, m, s) {
		m = n[k]; for (i = 1; i <= m; i++) s[i] = v[k, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
		return m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
	}
	function all(k,   i, o) { o = ""; for (i = 1; i <= n[k]; i++) o = o (i > 1 ? "/" : "") v[k, i]; return o }
	function ratios(j,   i, o) {
		o = ""
		for (i = 1; i <= n["mvm " j] && i <= n["qemu " j]; i++)
			o = o (i > 1 ? "/" : "") (v["qemu " j, i] ? sprintf("%.2f", v["mvm " j, i] / v["qemu " j, i]) : "-")
		return o
	}
	END {
		printf "%-20s %10s %10s %8s   %s\n", "job (median)", "mvm", "qemu", "mvm/qemu",
			"per round: mvm/qemu ratios; mvm | qemu"
		for (i = 1; i <= no; i++) {
			j = name[i]; m = med("mvm " j); q = med("qemu " j)
			printf "%-20s %10.1f %10.1f %7.2fx   %s; %s | %s %s\n", j, m, q, q ? m / q : 0,
				ratios(j), all("mvm " j), all("qemu " j),
				j ~ /^seq/ ? "MiB/s" : j ~ /^apt/ ? "s (time: lower is better)" : "IOPS"
			r[j] = m
		}
		if ("randread-4k-qd1" in r)
			printf "\nmvm QD32/QD1: randread %.2fx, randwrite %.2fx\n",
				r["randread-4k-qd1"] ? r["randread-4k-qd32"] / r["randread-4k-qd1"] : 0,
				r["randwrite-4k-qd1"] ? r["randwrite-4k-qd32"] / r["randwrite-4k-qd1"] : 0
	}' "$T/all"
