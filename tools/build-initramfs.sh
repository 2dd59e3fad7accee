#!/bin/sh
# Build the default guest: the initramfs (busybox-static + mvm-init as /init)
# and links to the cached kernel, all under OUT (build/guest). No root, no
# loop mounts: the cpio archive is written from a staging directory.
set -eu
out=${1:?usage: build-initramfs.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
"$root/tools/stage-userland.sh" "$stage" "$out"
mkdir -p "$stage/mnt"
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
