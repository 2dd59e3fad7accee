#!/bin/sh
# stage-userland.sh STAGE GUESTDIR: lay the guest's base userland into STAGE —
# busybox-static with one link per applet, GUESTDIR/mvm-init as /init, the
# guest agent and wget if built, and a root-only /etc. Shared by the default initramfs
# (tools/build-initramfs.sh) and the minimal image (images/build-minimal.sh).
set -eu
stage=${1:?usage: stage-userland.sh STAGE GUESTDIR}
guest=${2:?usage: stage-userland.sh STAGE GUESTDIR}
# Another architecture's guest (the arm64 box, tests/nested/arm64-mvm.lib):
# MVM_STAGE_BUSYBOX names its busybox, MVM_STAGE_RUN what runs it here
# (qemu-aarch64) to list its applets.
busybox=${MVM_STAGE_BUSYBOX:-/bin/busybox}
[ -x "$busybox" ] || { echo "stage-userland: $busybox missing (run: make deps)" >&2; exit 1; }
[ -f "$guest/mvm-init" ] || { echo "stage-userland: no $guest/mvm-init (run: make guest)" >&2; exit 1; }
mkdir -p "$stage/bin" "$stage/sbin" "$stage/usr/bin" "$stage/usr/sbin" "$stage/dev" \
	"$stage/proc" "$stage/sys" "$stage/tmp" "$stage/root" "$stage/etc" "$stage/run"
cp "$busybox" "$stage/bin/busybox"
# One link per applet, so `mvm run -- uname -a` finds uname on PATH.
for a in $(${MVM_STAGE_RUN:-} "$busybox" --list-full); do
	[ -e "$stage/$a" ] || ln -s /bin/busybox "$stage/$a"
done
cp "$guest/mvm-init" "$stage/init"
# wget: busybox 1.35's (Debian's build) segfaults on -T; mvm-wget does http://
# itself and hands the rest to busybox (guest/wget/wget.h). Debian's static
# busybox runs its own applet for a name typed in `sh` before looking at PATH,
# so the guest's copy calls its wget applet "wgbb" (same length, same place
# in the sorted name table): `wget` in a script then finds /usr/bin/wget.
if [ -f "$guest/mvm-wget" ]; then
	# Another busybox build: its applet stays (sh scripts get it; exec finds ours).
	python3 - "$stage/bin/busybox" <<'PY' || true
import sys
path = sys.argv[1]
data = open(path, "rb").read()
old, new = b"\0wc\0wget\0which\0", b"\0wc\0wgbb\0which\0"
if data.count(old) != 1:
    sys.exit(f"stage-userland: {path}: applet table not as expected; its wget applet is left as is")
open(path, "wb").write(data.replace(old, new))
PY
	rm -f "$stage/usr/bin/wget"
	cp "$guest/mvm-wget" "$stage/usr/bin/wget"
fi
# The guest agent (exec/cp over vsock) for long-lived sandboxes.
[ ! -f "$guest/mvm-agent" ] || cp "$guest/mvm-agent" "$stage/sbin/mvm-agent"
echo "root:x:0:0:root:/root:/bin/sh" > "$stage/etc/passwd"
echo "root:x:0:" > "$stage/etc/group"
echo "mvm" > "$stage/etc/hostname"
