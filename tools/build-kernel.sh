#!/bin/sh
# Build the guest kernel (vmlinux + bzImage) from Debian's linux-source-6.1,
# cached outside the checkout, keyed by the config fragment's hash and the
# source package version, so a second run is instant.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
frag="$root/guest/kernel.config"
src_tar=/usr/src/linux-source-6.1.tar.xz
cache="${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}"
[ -f "$src_tar" ] || { echo "build-kernel: $src_tar missing (run: make deps)" >&2; exit 1; }
ver=$(dpkg-query -W -f '${Version}' linux-source-6.1)
key=$( (cat "$frag"; echo "$ver") | sha256sum | cut -c1-16)
out="$cache/kernel-$key"
if [ -f "$out/vmlinux" ] && [ -f "$out/bzImage" ]; then
	echo "guest kernel: cached ($out)"
	exit 0
fi
mkdir -p "$cache"
# One build per key at a time: a second `make guest` (another checkout, a
# parallel make) waits for the first instead of deleting its work tree.
if command -v flock >/dev/null; then
	exec 8>"$cache/kernel-$key.lock"
	if ! flock -n 8; then
		echo "guest kernel: another build of this kernel is running; waiting for it" >&2
		flock 8
	fi
fi
if [ -f "$out/vmlinux" ] && [ -f "$out/bzImage" ]; then
	echo "guest kernel: cached ($out)"
	exit 0
fi
work="$cache/build-$key"
rm -rf "$work"; mkdir -p "$work"
echo "guest kernel: unpacking linux-source $ver ..."
tar -C "$work" -xf "$src_tar"
ksrc="$work/linux-source-6.1"
cd "$ksrc"
echo "guest kernel: configuring (tinyconfig + guest/kernel.config) ..."
make -s tinyconfig >/dev/null
scripts/kconfig/merge_config.sh -m .config "$frag" >/dev/null
make -s olddefconfig >/dev/null
missing=0
grep '^CONFIG_' "$frag" | while IFS= read -r line; do
	opt=${line%%=*}; val=${line#*=}
	# (if-statements, not &&-lists: the loop's status is its last command's)
	if [ "$val" = n ]; then
		if grep -q "^$opt=" .config; then echo "build-kernel: $opt should be off" >&2; exit 1; fi
	elif ! grep -qx "$line" .config; then
		echo "build-kernel: $line did not survive olddefconfig" >&2; exit 1
	fi
done || missing=1
[ $missing = 0 ] || exit 1
jobs=$(nproc)
echo "guest kernel: compiling with $jobs jobs (~15 min on 2 cores, once) ..."
start=$(date +%s)
make -j"$jobs" vmlinux bzImage >build.log 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null; do
	sleep 30
	kill -0 $pid 2>/dev/null || break
	n=$(find . -name '*.o' | wc -l)
	echo "guest kernel: $(( $(date +%s) - start ))s, $n objects built"
done
if ! wait $pid; then
	tail -30 build.log >&2
	echo "build-kernel: compile failed, log: $ksrc/build.log" >&2
	exit 1
fi
mkdir -p "$out.tmp"
cp vmlinux "$out.tmp/vmlinux"
cp arch/x86/boot/bzImage "$out.tmp/bzImage"
cp .config "$out.tmp/config"
rm -rf "$out"; mv "$out.tmp" "$out"
cd /; rm -rf "$work"
echo "guest kernel: built in $(( $(date +%s) - start ))s -> $out"
