#!/bin/sh
# Build the default guest: the initramfs (busybox-static + mvm-init as /init)
# and links to the cached kernel, all under OUT (build/guest). No root, no
# loop mounts: the cpio archive is written from a staging directory.
set -eu
out=${1:?usage: build-initramfs.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}"
busybox=/bin/busybox
[ -x "$busybox" ] || { echo "build-initramfs: $busybox missing (run: make deps)" >&2; exit 1; }
file "$busybox" 2>/dev/null | grep -q "statically linked" || true
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/sbin" "$stage/usr/bin" "$stage/usr/sbin" "$stage/dev" \
	"$stage/proc" "$stage/sys" "$stage/tmp" "$stage/root" "$stage/etc" "$stage/run" "$stage/mnt"
cp "$busybox" "$stage/bin/busybox"
# One link per applet, so `mvm run -- uname -a` finds uname on PATH.
for a in $("$busybox" --list-full); do
	[ -e "$stage/$a" ] || ln -s /bin/busybox "$stage/$a"
done
cp "$out/mvm-init" "$stage/init"
# The guest agent (exec/cp over vsock) for long-lived sandboxes.
[ ! -f "$out/mvm-agent" ] || cp "$out/mvm-agent" "$stage/sbin/mvm-agent"
echo "root:x:0:0:root:/root:/bin/sh" > "$stage/etc/passwd"
echo "root:x:0:" > "$stage/etc/group"
echo "mvm" > "$stage/etc/hostname"
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
	> "$out/initramfs.cpio.tmp"
mv "$out/initramfs.cpio.tmp" "$out/initramfs.cpio"
# The kernel lives in the cache (built once per config); link it beside the initramfs.
# Same key as build-kernel.sh (its version line ends in a newline).
key=$( (cat "$root/guest/kernel.config"; echo "$(dpkg-query -W -f '${Version}' linux-source-6.1)") | sha256sum | cut -c1-16)
kdir="$cache/kernel-$key"
[ -f "$kdir/vmlinux" ] || { echo "build-initramfs: kernel not built ($kdir)" >&2; exit 1; }
ln -sf "$kdir/vmlinux" "$out/vmlinux"
ln -sf "$kdir/bzImage" "$out/bzImage"
echo "guest: $out/initramfs.cpio ($(du -k "$out/initramfs.cpio" | cut -f1) KiB), kernel $kdir"
