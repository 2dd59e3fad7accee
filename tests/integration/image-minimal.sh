#!/bin/sh
# `mvm image build minimal` (built here when the store lacks it: seconds, no
# network) and `mvm run --image`: by name from the store, by path, and a clear
# error for an unknown name.
. tests/integration/lib.sh
# The command's output without tty line endings (older guest inits add CR).
out() { tr -d '\r' < "$T/out"; }

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
"$MVM" image build minimal > "$T/build.log" 2>&1 || { cat "$T/build.log" >&2; fail "mvm image build minimal"; }
tail -1 "$T/build.log"
run_mvm image ls
expect_match "image ls" "^minimal\.ext4 +raw " "$(grep '^minimal' "$T/out")"

run_mvm run --image minimal -- cat /etc/os-release
expect_eq "run --image minimal" 0 "$rc"
expect_match "root is the minimal image" "^ID=mvm-minimal$" "$(out | grep '^ID=')"

# By path too; the guest init switched to /dev/vda (the overlay on the image).
img=$(grep -o '/[^ ]*minimal\.ext4' "$T/build.log" | tail -1)
[ -n "$img" ] || img=${MVM_IMAGE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mvm/images}/minimal.ext4
run_mvm run --image "$img" -- sh -c 'grep " / " /proc/mounts'
expect_eq "run --image PATH" 0 "$rc"
expect_match "root on vda" "^/dev/vda / ext4 " "$(out)"

run_mvm run --image no-such-image-here -- true
expect_eq "unknown image status" 125 "$rc"
expect_match "unknown image message" "no image 'no-such-image-here'" "$(cat "$T/err")"
run_mvm run --image minimal --rootfs "$img" -- true
expect_eq "--image with --rootfs" 2 "$rc"
echo "image-minimal: ok"
