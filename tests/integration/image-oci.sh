#!/bin/sh
# `mvm image import`: OCI images built here, offline, with umoci (a layout
# from busybox-static files) and converted by skopeo to a docker archive
# and an OCI archive, and recompressed with zstd. Three layers: a base, one deleting a file (umoci
# writes the whiteout), one hand-made with an opaque directory, a set-id
# root file, a hard link and a file owned by 1234:5678. Each source kind is
# imported; the booted guest sees exactly the tree umoci's own unpack gives
# (names, types, modes, owners, content hashes, link targets); with no
# command `mvm run` runs the image's own with its Env, WorkingDir and User
# (resolved at import with the image's /etc/passwd). Then hostile
# images: each is refused with its reason and leaves nothing in the store.
. tests/integration/lib.sh
for t in umoci skopeo mkfs.ext4 debugfs python3 busybox; do
	command -v $t >/dev/null || skip "$t missing (tools/deps.sh)"
done
export MVM_IMAGE_DIR="$T/store"
L="$T/layout"
out() { tr -d '\r' < "$T/out"; }

# ---- the image ----
umoci init --layout "$L" >/dev/null
umoci new --image "$L:t" >/dev/null
umoci unpack --image "$L:t" "$T/b" >/dev/null
r="$T/b/rootfs"
mkdir -p "$r/bin" "$r/etc/conf.d" "$r/data" "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/run"
cp /bin/busybox "$r/bin/busybox"
for a in sh find sort stat sha256sum readlink cat echo pwd env id; do ln -s busybox "$r/bin/$a"; done
echo one > "$r/etc/conf.d/a"
echo two > "$r/etc/conf.d/b"
echo gone > "$r/data/deleted"
echo kept > "$r/data/kept"
chmod 0750 "$r/data"
umoci repack --image "$L:t" "$T/b" >/dev/null
rm -rf "$T/b"
umoci unpack --image "$L:t" "$T/b" >/dev/null
rm "$T/b/rootfs/data/deleted"
echo new > "$T/b/rootfs/data/added"
umoci repack --image "$L:t" "$T/b" >/dev/null
rm -rf "$T/b"
# Layer 3 by hand: python's tarfile writes exactly what it is told.
python3 - "$T/l3.tar" <<'PY'
import io, sys, tarfile
t = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
def add(name, data=b"", mode=0o644, uid=0, gid=0, kind=tarfile.REGTYPE, link=""):
    i = tarfile.TarInfo(name); i.type = kind; i.mode = mode; i.uid = uid; i.gid = gid
    i.linkname = link; i.size = len(data) if kind == tarfile.REGTYPE else 0
    t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
add("etc/conf.d/c", b"three\n")
add("etc/conf.d/.wh..wh..opq")
add("srv", mode=0o2770, uid=1234, gid=5678, kind=tarfile.DIRTYPE)
add("srv/owned", b"mine\n", mode=0o640, uid=1234, gid=5678)
add("bin/suid", b"#!/bin/sh\n", mode=0o4755)
add("srv/hard", kind=tarfile.LNKTYPE, link="srv/owned", mode=0o640, uid=1234, gid=5678)
add("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\napp:x:1234:1234::/srv:/bin/sh\n")
add("etc/group", b"root:x:0:\napp:x:1234:\n")
t.close()
PY
umoci raw add-layer --image "$L:t" "$T/l3.tar" >/dev/null
umoci config --image "$L:t" --config.env FOO=bar --config.workingdir /srv --config.user app \
	--config.entrypoint /bin/sh --config.cmd -c --config.cmd 'echo from-image $FOO $(pwd) $(id -u)' >/dev/null
skopeo copy -q "oci:$L:t" "docker-archive:$T/d.tar:oci-test:latest"
skopeo copy -q "oci:$L:t" "oci-archive:$T/o.tar:t"
skopeo copy -q --dest-compress --dest-compress-format zstd "oci:$L:t" "oci:$T/z:t"
grep -q 'tar+zstd' "$T"/z/blobs/sha256/* || fail "skopeo wrote no zstd layer"

# The reference: umoci's own unpack (as root: owners kept).
umoci unpack --image "$L:t" "$T/ref" >/dev/null
# One line per entry, the same busybox script on both sides: mount points
# (the guest's init mounts over them) and the resolver file it writes are left out.
list='cd "$1" && find . -xdev | sort | while IFS= read -r p; do
	case "$p" in ./proc|./sys|./dev|./tmp|./run|./etc/resolv.conf) continue ;; esac
	s=$(stat -c "%F %a %u:%g" "$p")
	if [ -L "$p" ]; then echo "$p $s -> $(readlink "$p")"
	elif [ -f "$p" ]; then echo "$p $s $(sha256sum < "$p" | cut -c1-16)"
	else echo "$p $s"; fi
done'
busybox sh -c "$list" sh "$T/ref/rootfs" > "$T/ref.list"
grep -q '^./data/deleted' "$T/ref.list" && fail "reference: umoci kept the deleted file"
grep -q '^./etc/conf.d/a' "$T/ref.list" && fail "reference: umoci kept the opaque dir's lower files"
expect_match "reference has the setuid file" '^\./bin/suid regular file 4755 0:0 ' "$(grep suid "$T/ref.list")"

for src in "oci:$L:t" "docker-archive:$T/d.tar" "oci-archive:$T/o.tar:t" "oci:$T/z:t"; do
	run_mvm image import "$src" --name oci-test --force
	expect_eq "import $src: status" 0 "$rc"
	run_mvm run --net none --image oci-test --user 0 -- sh -c "$list" sh /
	[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "run on $src: status $rc"; }
	out > "$T/guest.list"
	if ! cmp -s "$T/ref.list" "$T/guest.list"; then
		diff "$T/ref.list" "$T/guest.list" >&2 || :
		fail "$src: the guest's tree is not umoci's unpack"
	fi
	echo "image-oci: $src: $(wc -l < "$T/guest.list") entries as umoci unpacks them"
done
# The image's own command, Env, WorkingDir and User (app: 1234 in the
# image's /etc/passwd); -e, -w and -u win over them.
run_mvm run --net none --image oci-test
expect_eq "no command: the image's Entrypoint + Cmd as its User" "from-image bar /srv 1234" "$(out)"
run_mvm run --net none --image oci-test -e FOO=mine -w / -u 0
expect_eq "-e, -w and -u over the image's" "from-image mine / 0" "$(out)"
expect_match "NAME.json keeps the config's defaults" '"WorkingDir":[[:space:]]*"/srv"' \
	"$(tr -d '\n' < "$MVM_IMAGE_DIR/oci-test.json")"
run_mvm image import "oci:$L:t" --name oci-test
expect_eq "existing name without --force: status" 1 "$rc"
expect_match "existing name: message" "exists \(--force replaces it\)" "$(cat "$T/err")"

# ---- hostile images: refused, nothing left ----
hostile() { # NAME EXPECTED-MESSAGE-REGEX LAYER-ENTRIES... (python, one layer each)
	name=$1 why=$2
	shift 2
	rm -rf "$T/h" && cp -a "$L" "$T/h"
	for entries; do
		python3 - "$T/$name.tar" "$entries" <<'PY'
import io, sys, tarfile
t = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
def add(name, data=b"", mode=0o644, uid=0, kind=tarfile.REGTYPE, link=""):
    i = tarfile.TarInfo(name); i.type = kind; i.mode = mode; i.uid = uid; i.linkname = link
    i.size = len(data) if kind == tarfile.REGTYPE else 0
    if kind == tarfile.CHRTYPE: i.devmajor, i.devminor = 1, 3
    t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
exec(sys.argv[2])
t.close()
PY
		umoci raw add-layer --image "$T/h:t" "$T/$name.tar" >/dev/null
	done
	run_mvm image import "oci:$T/h:t" --name "$name"
	expect_eq "$name: status" 1 "$rc"
	expect_match "$name: message" "$why" "$(cat "$T/err")"
	[ -z "$(ls -A "$MVM_IMAGE_DIR" | grep -v '^oci-test\.')" ] ||
		fail "$name: left in the store: $(ls -A "$MVM_IMAGE_DIR")"
}
hostile dotdot "'\.\.' component" 'add("../../escape", b"x")'
hostile absolute "absolute path" 'add("/etc/evil", b"x")'
hostile device "device node" 'add("dev/mem", kind=tarfile.CHRTYPE)'
hostile setuid "setuid/setgid outside the policy" 'add("bin/own", b"x", mode=0o4755, uid=1000)'
hostile hardlink "'\.\.' component" 'add("h", kind=tarfile.LNKTYPE, link="../../etc/shadow")'
hostile symlink "symlink or not a directory" \
	'add("bin/lnk", kind=tarfile.SYMTYPE, link="/tmp"); add("bin/lnk/evil", b"x")'
# A lower layer's symlink redirecting a later layer's write (to the host's
# /tmp, were it followed): refused, and nothing appears there.
hostile redirect "symlink or not a directory" \
	"add('lib', kind=tarfile.SYMTYPE, link='$T/outside')" 'add("lib/evil", b"x")'
[ ! -e "$T/outside" ] || fail "redirect: something was written through the link"
rm -f "$T/bomb.raw"; truncate -s 120M "$T/bomb.raw"
python3 -c '
import sys, tarfile
t = tarfile.open(sys.argv[1], "w:gz", compresslevel=1)
t.add(sys.argv[2], arcname="zeros"); t.close()' "$T/bomb.tgz" "$T/bomb.raw"
rm -rf "$T/h" && cp -a "$L" "$T/h"
umoci raw add-layer --image "$T/h:t" "$T/bomb.tgz" >/dev/null
run_mvm image import "oci:$T/h:t" --name bomb
expect_eq "bomb: status" 1 "$rc"
expect_match "bomb: message" "decompression bomb" "$(cat "$T/err")"
# A blob whose bytes are not its digest.
rm -rf "$T/h" && cp -a "$L" "$T/h"
blob=$(ls -S "$T/h/blobs/sha256" | head -1)
printf 'X' | dd of="$T/h/blobs/sha256/$blob" bs=1 seek=100 conv=notrunc 2>/dev/null
run_mvm image import "oci:$T/h:t" --name corrupt
expect_eq "digest mismatch: status" 1 "$rc"
expect_match "digest mismatch: message" "digest mismatch" "$(cat "$T/err")"
[ -z "$(ls -A "$MVM_IMAGE_DIR" | grep -v '^oci-test\.')" ] || fail "left in the store: $(ls -A "$MVM_IMAGE_DIR")"
echo "image-oci: ok"
