#!/bin/sh
# Both boot paths work: bzImage (64-bit boot protocol) and an ext4 root disk.
. tests/integration/lib.sh
guest=$(dirname "$MVM")/guest

run_mvm run --kernel "$guest/bzImage" -- uname -r
expect_eq "bzImage status" 0 "$rc"
expect_match "bzImage kernel" '^6\.1\.' "$(cat "$T/out")"

# A root filesystem image built without root or loop mounts.
mkdir -p "$T/root"
(cd "$T/root" && cpio -id --quiet < "$OLDPWD/$guest/initramfs.cpio")
echo "from-the-rootfs" > "$T/root/marker"
mkfs.ext4 -q -F -d "$T/root" "$T/root.img" 64M
run_mvm run --rootfs "$T/root.img" -- cat /marker
expect_eq "rootfs status" 0 "$rc"
expect_eq "rootfs marker" "from-the-rootfs" "$(cat "$T/out")"

# The environment is only what the user passes: no host variables leak.
export MVM_SECRET_HOST_VALUE=do-not-leak
run_mvm run -e GREETING=hi -- sh -c 'env'
expect_match "user env" '^GREETING=hi$' "$(grep GREETING "$T/out")"
if grep -q do-not-leak "$T/out"; then fail "host environment leaked into the guest"; fi
