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
# MVM_BENCH_WORKLOADS ("fio install"), MVM_BENCH_VM_SECS (480 per boot),
# MVM_BENCH_IO_RAW (a file for the raw lines), MVM_IMAGE_DIR (the debian image).
set -eu
MVM=${MVM:-build/mvm}
GUEST=${MVM_GUEST_DIR:-$(dirname "$MVM")/guest}
RUNS=${MVM_BENCH_RUNS:-3}
SECS=${MVM_BENCH_IO_SECS:-4}
WORKLOADS=${MVM_BENCH_WORKLOADS:-fio install}
# One boot's limit: in the box a run takes 1-2 min; a stalled one is cut
# short and left out (check) rather than holding the whole run.
VM_SECS=${MVM_BENCH_VM_SECS:-480}
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

# check FILE WHO ROUND: the guest's job lines as "WHO ROUND JOB VALUES"
# (also appended to MVM_BENCH_IO_RAW at once, so a run cut short keeps its
# rounds). A failed run is reported and left out: the box loses a round now
# and then to its own stalls, and the other rounds still count.
check() {
	if ! grep -q 'bench-rc=0' "$1"; then
		echo "bench-guest-io: $2 run of round $3 failed, left out:" >&2
		tail -20 "$1" >&2
		echo "$2 round $3" >> "$T/failed"
		return 0
	fi
	grep -E '^[a-z0-9-]+ (iops|secs)=' "$1" | tr -d '\r' | sed "s/^/$2 $3 /" | tee -a "$RAW" >> "$T/all"
}

# mvm_run WORKLOAD ROUND, qemu_run WORKLOAD ROUND
mvm_run() {
	eval "overlay \$BASE_$1; cmd=\$CMD_$1"
	timeout "$VM_SECS" "$MVM" run --memory 256M --disk "$T/ov.qcow2:qcow2" --disk "$T/tools.ext4:ro" \
		-- sh -c "$cmd" > "$T/m.out" 2>&1 || true
	check "$T/m.out" mvm "$2"
}

qemu_run() {
	eval "overlay \$BASE_$1"
	qemu_microvm "$VM_SECS" "$T/q.out" "$T/q-$1.cpio" \
		-drive "file=$T/ov.qcow2,format=qcow2,if=none,id=d0,cache=writeback,aio=threads" \
		-device virtio-blk-device,drive=d0 \
		-drive "file=$T/tools.ext4,format=raw,if=none,id=d1,readonly=on" \
		-device virtio-blk-device,drive=d1
	check "$T/q.out" qemu "$2"
}

: > "$T/all"
RAW=${MVM_BENCH_IO_RAW:-/dev/null}
: > "$RAW"
for i in $(seq "$RUNS"); do
	for w in $WORKLOADS; do mvm_run "$w" "$i"; qemu_run "$w" "$i"; done
	echo "round $i done" >&2
done
# Medians per VMM and job over the rounds it finished; every round's figure
# listed for the spread ("-": that run failed), and each round's mvm/QEMU
# ratio.
awk -v rounds="$RUNS" '
	# Sequential jobs in MiB/s, the install in seconds, the others in IOPS.
	{ f = $4 ~ /^secs=/ || ($4 ~ /^iops=/ && $3 !~ /^seq/) ? $4 : $5
	  split(f, a, "="); v[$1, $3, $2] = a[2]
	  if (!(($3) in seen)) { seen[$3] = 1; name[++no] = $3 } }
	function med(w, j,   i, k, m, t, s) {
		m = 0; for (i = 1; i <= rounds; i++) if ((w, j, i) in v) s[++m] = v[w, j, i]
		for (i = 1; i <= m; i++) for (k = i + 1; k <= m; k++) if (s[k] < s[i]) { t = s[i]; s[i] = s[k]; s[k] = t }
		return m == 0 ? 0 : m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
	}
	function all(w, j,   i, o) {
		o = ""; for (i = 1; i <= rounds; i++) o = o (i > 1 ? "/" : "") ((w, j, i) in v ? v[w, j, i] : "-")
		return o
	}
	function ratios(j,   i, o, ok) {
		o = ""
		for (i = 1; i <= rounds; i++) {
			ok = ("mvm", j, i) in v && ("qemu", j, i) in v && v["qemu", j, i] > 0
			o = o (i > 1 ? "/" : "") (ok ? sprintf("%.2f", v["mvm", j, i] / v["qemu", j, i]) : "-")
		}
		return o
	}
	END {
		printf "%-20s %10s %10s %8s   %s\n", "job (median)", "mvm", "qemu", "mvm/qemu",
			"per round: mvm/qemu ratios; mvm | qemu"
		for (i = 1; i <= no; i++) {
			j = name[i]; m = med("mvm", j); q = med("qemu", j)
			printf "%-20s %10.1f %10.1f %7.2fx   %s; %s | %s %s\n", j, m, q, q ? m / q : 0,
				ratios(j), all("mvm", j), all("qemu", j),
				j ~ /^seq/ ? "MiB/s" : j ~ /^apt/ ? "s (time: lower is better)" : "IOPS"
			r[j] = m
		}
		if ("randread-4k-qd1" in r)
			printf "\nmvm QD32/QD1: randread %.2fx, randwrite %.2fx\n",
				r["randread-4k-qd1"] ? r["randread-4k-qd32"] / r["randread-4k-qd1"] : 0,
				r["randwrite-4k-qd1"] ? r["randwrite-4k-qd32"] / r["randwrite-4k-qd1"] : 0
	}' "$T/all"
if [ -s "$T/failed" ]; then
	echo "bench-guest-io: failed runs, left out: $(tr '\n' ';' < "$T/failed")" >&2
	# Medians need a round from each VMM of every workload.
	for w in mvm qemu; do
		grep -q "^$w " "$T/all" || { echo "bench-guest-io: no $w round finished" >&2; exit 1; }
	done
fi
