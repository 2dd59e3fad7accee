#!/bin/sh
# A raw virtio-blk disk: written in one run, read back in the next; read-only
# disks refuse writes.
. tests/integration/lib.sh

truncate -s 16M "$T/disk.img"
run_mvm run --disk "$T/disk.img" -- sh -c 'echo persisted-4242 | dd of=/dev/vda bs=512 conv=sync 2>/dev/null && sync'
expect_eq "write run" 0 "$rc"
run_mvm run --disk "$T/disk.img" -- sh -c 'head -c 14 /dev/vda'
expect_eq "read run" 0 "$rc"
expect_eq "data read back" "persisted-4242" "$(cat "$T/out")"
# The host file holds it too: the guest wrote the real file.
expect_eq "host view" "persisted-4242" "$(head -c 14 "$T/disk.img")"

# ext4 through the guest kernel, two runs.
mkfs.ext4 -q -F "$T/fs.img" 32M
run_mvm run --disk "$T/fs.img" -- sh -c 'mkdir -p /mnt && mount /dev/vda /mnt && echo hello > /mnt/f && umount /mnt'
expect_eq "ext4 write" 0 "$rc"
run_mvm run --disk "$T/fs.img" -- sh -c 'mkdir -p /mnt && mount /dev/vda /mnt && cat /mnt/f'
expect_eq "ext4 read" "hello" "$(cat "$T/out")"

sum=$(sha256sum "$T/disk.img")
run_mvm run --disk "$T/disk.img:ro" -- sh -c 'echo x | dd of=/dev/vda 2>/dev/null; sync; cat /sys/block/vda/ro'
expect_eq "ro flag in guest" "1" "$(cat "$T/out")"
expect_eq "ro disk unchanged" "$sum" "$(sha256sum "$T/disk.img")"
