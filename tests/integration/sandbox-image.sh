#!/bin/sh
# --image: a raw ext4 root disk (here: the default initramfs's files as ext4),
# copied per sandbox; the agent still runs (copied out of the initramfs before
# the root switch); the root persists across stop/start; the source image
# never changes.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
cpio=$(cd "$(dirname "$MVM")" && pwd)/guest/initramfs.cpio
[ -f "$cpio" ] || skip "no $cpio (make guest)"
mkdir "$T/rootdir"
(cd "$T/rootdir" && cpio -id --quiet < "$cpio")
rm -f "$T/rootdir/sbin/mvm-agent"	# the agent must come from the initramfs
echo image-root > "$T/rootdir/etc/marker"
mkfs.ext4 -q -F -d "$T/rootdir" "$T/root.img" 64M
sum=$(sha256sum < "$T/root.img")

sb_create img --image "$T/root.img"
run_mvm exec img -- cat /etc/marker
expect_eq "root from the image" "image-root" "$(cat "$T/out")"
run_mvm exec img -- sh -c 'echo kept > /root/note && sync'
run_mvm stop img
run_mvm start img
expect_eq "start" 0 "$rc"
run_mvm exec img -- cat /root/note
expect_eq "root persisted" "kept" "$(cat "$T/out")"
run_mvm ls --json
expect_match "image listed" "root.img" "$(cat "$T/out")"
expect_eq "source image untouched" "$sum" "$(sha256sum < "$T/root.img")"
echo "sandbox-image: ok"
