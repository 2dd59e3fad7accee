#!/bin/sh
# --image: a raw ext4 root disk (here: the default initramfs's files as ext4,
# in an image store of the test's own) shared read-only by every sandbox made
# from it, each writing to its own qcow2 overlay; the agent still runs (copied
# out of the initramfs before the root switch); the root persists across
# stop/start; the base never changes. A template (and a fork) of such a
# sandbox references the store's image instead of copying it; a sandbox from
# the template sees the source's root; once the image changes, a start from
# the template is refused with nothing left behind. An image given by path
# cannot be referenced: a template, snapshot or fork of it is refused before
# the source pauses.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
# refused WHAT PATTERN PATH: the last run_mvm failed saying PATTERN and left no PATH.
refused() {
	[ "$rc" != 0 ] || fail "$1 succeeded"
	expect_match "why $1 is refused" "$2" "$(cat "$T/err")"
	[ ! -e "$3" ] || fail "$1, refused, left $3"
}
cpio=$(cd "$(dirname "$MVM")" && pwd)/guest/initramfs.cpio
[ -f "$cpio" ] || skip "no $cpio (make guest)"
mkdir "$T/rootdir"
(cd "$T/rootdir" && cpio -id --quiet < "$cpio")
rm -f "$T/rootdir/sbin/mvm-agent"	# the agent must come from the initramfs
echo image-root > "$T/rootdir/etc/marker"
export MVM_IMAGE_DIR="$T/images" MVM_TEMPLATE_DIR="$T/templates"
mkdir "$T/images"
mkfs.ext4 -q -F -d "$T/rootdir" "$T/images/root.ext4" 64M
sum=$(sha256sum < "$T/images/root.ext4")

sb_create img --image root
run_mvm exec img -- cat /etc/marker
expect_eq "root from the image" "image-root" "$(cat "$T/out")"
# The root disk is moved over / (not chroot'ed into): the kernel refuses
# new user namespaces to a chrooted process (Chromium's sandbox needs them);
# POSIX shared memory has its tmpfs.
run_mvm exec img -- sh -c 'unshare -U -r true && echo userns-ok; grep -c "^tmpfs /dev/shm tmpfs" /proc/mounts'
expect_eq "user namespaces and /dev/shm on the root disk" "userns-ok
1" "$(cat "$T/out")"
run_mvm exec img -- sh -c 'echo kept > /root/note && sync'
ov="$MVM_STATE_DIR/img/root.qcow2"
expect_eq "the sandbox's disk is a qcow2 overlay" "QFI" "$(head -c 3 "$ov")"
ls "$MVM_STATE_DIR/img" | grep -q 'rootfs.img' && fail "the image was copied"
[ "$(du -k "$ov" | cut -f1)" -lt 4096 ] || fail "overlay holds a copy: $(du -k "$ov")"

# A second sandbox, on a copy of the image given by path, sees the base,
# not the first one's writes.
cp --sparse=always "$T/images/root.ext4" "$T/root.img"
sb_create img2 --image "$T/root.img"
run_mvm exec img2 -- sh -c 'cat /etc/marker; cat /root/note 2>/dev/null || echo no-note'
expect_eq "second sandbox: own overlay" "image-root
no-note" "$(cat "$T/out")"
# Its image is no image of the store: no template of it (nothing to
# reference), refused before anything happens; the sandbox runs on.
t_tpl=$(date +%s%N)
run_mvm template create tpath --from img2
refused "a template of an image given by path" "root.img is not an image of the image store" "$T/templates/tpath"
# Nor a snapshot or a fork of it (its restore would be refused): refused
# the same way, naming the fix, before the source pauses; nothing written.
SANDBOXES="$SANDBOXES fpath"
run_mvm snapshot img2 "$T/snap-path"
refused "a snapshot of an image given by path" \
	"cannot snapshot img2: .*root.img is not an image of the image store.*--image NAME" "$T/snap-path"
run_mvm fork img2 fpath
refused "a fork of an image given by path" \
	"cannot fork img2: .*root.img is not an image of the image store.*--image NAME" "$MVM_STATE_DIR/fpath"
[ ! -e "$MVM_STATE_DIR/img2/snapshot.out" ] || fail "a refused snapshot reached the VMM"
! grep -q '"snapshot"' "$MVM_STATE_DIR/img2/events.jsonl" || fail "the source was paused for a snapshot"
run_mvm exec img2 -- cat /etc/marker
expect_eq "the source runs on after a refused template, snapshot and fork" "image-root" "$(cat "$T/out")"
run_mvm rm -f img2
expect_eq "rm the second" 0 "$rc"

# A template of img: its layers, not the image, which it references.
t0=$(date +%s%N)
run_mvm template create timg --from img
[ "$rc" = 0 ] || fail "template create of an image sandbox: $(cat "$T/err")"
echo "sandbox-image: template create took $(( ($(date +%s%N) - t0) / 1000000 )) ms" >&2
! ls "$T/templates/timg" | grep -q 'ext4\|\.img' || fail "the image was copied: $(ls "$T/templates/timg")"
[ "$(cat "$T/templates/timg/"*.qcow2 | wc -c)" -lt 8388608 ] || fail "template layers hold a copy: $(ls -l "$T/templates/timg")"
run_mvm template inspect timg
expect_match "the template names its image" "image: +$T/images/root.ext4 \(referenced" "$(grep '^image:' "$T/out")"
SANDBOXES="$SANDBOXES c1 f1 c2"
run_mvm create c1 --template timg
[ "$rc" = 0 ] || fail "create from an image template: $(cat "$T/err")"
run_mvm exec c1 -- sh -c 'cat /etc/marker /root/note; hostname; echo c1-only > /root/c1'
expect_eq "from the template: the image's root, the source's write, its own name" "image-root
kept
c1" "$(cat "$T/out")"
run_mvm exec img -- sh -c 'cat /root/c1 2>/dev/null || echo absent'
expect_eq "the source does not see the new sandbox's writes" "absent" "$(cat "$T/out")"
# A fork references the image the same way.
run_mvm fork c1 f1
[ "$rc" = 0 ] || fail "fork of an image sandbox: $(cat "$T/err")"
run_mvm exec f1 -- cat /root/c1
expect_eq "the fork has c1's root" "c1-only" "$(cat "$T/out")"
run_mvm rm -f f1

# The image changes (here only its modification time): a start from the
# template is refused, naming the image and what to do; nothing is left.
touch "$T/images/root.ext4"
run_mvm create c2 --template timg
refused "a start from a template whose image changed" \
	"root.ext4 changed since it was recorded.*rebuild the template" "$MVM_STATE_DIR/c2"
run_mvm exec c1 -- cat /root/c1
expect_eq "a sandbox from it runs on" "c1-only" "$(cat "$T/out")"
run_mvm rm -f c1
run_mvm template rm timg
expect_eq "template rm" 0 "$rc"
echo "sandbox-image: the template checks took $(( ($(date +%s%N) - t_tpl) / 1000000 )) ms" >&2
run_mvm exec img -- cat /root/note
expect_eq "the source runs on after the template" "kept" "$(cat "$T/out")"
run_mvm stop img
run_mvm start img
expect_eq "start" 0 "$rc"
run_mvm exec img -- cat /root/note
expect_eq "root persisted" "kept" "$(cat "$T/out")"
run_mvm ls --json
expect_match "image listed" "root.ext4" "$(cat "$T/out")"
expect_eq "source image untouched" "$sum" "$(sha256sum < "$T/images/root.ext4")"
echo "sandbox-image: ok"
