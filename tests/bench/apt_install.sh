#!/bin/sh
# Inside the guest (busybox sh): bench-guest-io's install workload. $2 is the
# Debian root image (a fresh qcow2 overlay over the store's debian image),
# mounted at /r and entered with chroot; $1 is the read-only tools disk whose
# repo/ (tests/bench/apt_repo.sh) becomes apt's only source, a flat file:
# repository. Untimed: apt-get update, then sync and dropped caches. Timed
# (/proc/uptime, the guest's monotonic clock): apt-get install of the packages in repo/pkgs,
# which reads every .deb from the tools disk and unpacks, fsyncs and
# configures them on $2 as dpkg does, plus a final sync. Then both runtimes
# must start. One line: "apt-install secs=S" (tests/bench/guest_io.sh).
# $3 = skip: everything up to the install, not the install (the baseline of
# tests/bench/count.sh, which counts the install's work as a difference).
t=$1 dev=$2 skip=${3:-}
r=/r
log=/apt.log
fail() {
	echo "apt-install failed: $*" >&2
	tail -15 "$log" >&2
	exit 1
}
mkdir -p "$r"
mount -t ext4 "$dev" "$r" || fail "mount $dev"
mount -t proc proc "$r/proc" && mount -t sysfs sys "$r/sys" &&
	mount -t devtmpfs dev "$r/dev" && mount -o bind "$t/repo" "$r/mnt" || fail "mounts"
rm -f "$r"/etc/apt/sources.list "$r"/etc/apt/sources.list.d/*
echo 'deb [trusted=yes] file:/mnt ./' > "$r/etc/apt/sources.list.d/bench.list"
in_root() { chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
	DEBIAN_FRONTEND=noninteractive HOME=/root "$@"; }
in_root apt-get -q update > "$log" 2>&1 || fail "apt-get update"
pkgs=$(cat "$t/repo/pkgs")
sync
echo 3 > /proc/sys/vm/drop_caches
[ "$skip" = skip ] && { echo "apt-install skipped"; exit 0; }
read -r t0 _ < /proc/uptime
# No --no-download: apt's file method hands over the .deb where it lies (no
# copy), and --no-download would make apt look for it in its own cache.
# shellcheck disable=SC2086
in_root apt-get -q -y -o Dpkg::Use-Pty=0 install $pkgs >> "$log" 2>&1 ||
	fail "apt-get install"
sync
read -r t1 _ < /proc/uptime
in_root python3 -c 'import ssl, sqlite3' >> "$log" 2>&1 || fail "python3 does not start"
in_root perl -MPOSIX -e 1 >> "$log" 2>&1 || fail "perl does not start"
echo "$t0 $t1" | awk '{ printf "apt-install secs=%.2f from=%s to=%s\n", $2 - $1, $1, $2 }'
