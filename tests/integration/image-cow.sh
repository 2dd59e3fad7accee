#!/bin/sh
# `mvm run --image` never writes the image: the guest overwrites every block
# of its root disk (through the per-run qcow2 overlay), the base's sha256 is
# unchanged, the next run boots the pristine image, and no overlay is left in
# TMPDIR. Uses its own store (MVM_IMAGE_DIR) with a small minimal image.
. tests/integration/lib.sh
# The command's output without tty line endings (older guest inits add CR).
out() { tr -d '\r' < "$T/out"; }

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
export MVM_IMAGE_DIR="$T/store" TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
"$MVM" image build minimal --size 64M > "$T/build.log" 2>&1 ||
	{ cat "$T/build.log" >&2; fail "mvm image build minimal --size 64M"; }
img="$T/store/minimal.ext4"
expect_eq "image size" 67108864 "$(stat -c %s "$img")"
sum=$(sha256sum < "$img")

# A file through the filesystem, then every block of /dev/vda overwritten.
run_mvm run --image minimal -- sh -c \
	'echo scribble > /root/scribble && sync &&
	 dd if=/dev/zero of=/dev/vda bs=1M conv=fsync 2>/dev/null; echo "wrote $(blockdev --getsize64 /dev/vda)"'
expect_eq "guest overwrote its root disk" 0 "$rc"
expect_eq "bytes written" "wrote 67108864" "$(out)"
expect_eq "base image unchanged" "$sum" "$(sha256sum < "$img")"
expect_eq "no overlay left in TMPDIR" "" "$(ls -A "$TMPDIR")"

run_mvm run --image minimal -- sh -c 'cat /etc/hostname; ls /root'
expect_eq "next run" 0 "$rc"
expect_eq "pristine root" "mvm" "$(out)"
expect_eq "base image still unchanged" "$sum" "$(sha256sum < "$img")"
echo "image-cow: ok"
