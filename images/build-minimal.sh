#!/bin/sh
# `mvm image build minimal`: busybox-static plus the guest init and agent as an
# ext4 root image. Seconds, no network, no root, no mounts.
here=$(cd "$(dirname "$0")" && pwd)
STEPS=2
. "$here/image-lib.sh"
guest=${MVM_GUEST_DIR:-$here/../build/guest}
busybox=/bin/busybox
[ -x "$busybox" ] || { echo "build-minimal: $busybox missing (run: make deps)" >&2; exit 1; }
[ -f "$guest/mvm-init" ] || { echo "build-minimal: no $guest/mvm-init (run: make guest)" >&2; exit 1; }
image_stage

step "staging busybox $("$busybox" 2>&1 | head -1 | awk '{print $2}') and the guest init/agent"
mkdir -p "$stage/bin" "$stage/sbin" "$stage/usr/bin" "$stage/usr/sbin" "$stage/dev" \
	"$stage/proc" "$stage/sys" "$stage/tmp" "$stage/root" "$stage/etc" "$stage/run" \
	"$stage/var/tmp" "$stage/home"
chmod 1777 "$stage/tmp" "$stage/var/tmp"
chmod 700 "$stage/root"
cp "$busybox" "$stage/bin/busybox"
for a in $("$busybox" --list-full); do
	[ -e "$stage/$a" ] || ln -s /bin/busybox "$stage/$a"
done
cp "$guest/mvm-init" "$stage/init"
[ ! -f "$guest/mvm-agent" ] || cp "$guest/mvm-agent" "$stage/sbin/mvm-agent"
echo "root:x:0:0:root:/root:/bin/sh" > "$stage/etc/passwd"
echo "root:x:0:" > "$stage/etc/group"
echo "mvm" > "$stage/etc/hostname"
cat > "$stage/etc/os-release" <<OS
NAME="mvm minimal"
ID=mvm-minimal
PRETTY_NAME="mvm minimal (busybox)"
OS

image_finish "busybox-static + mvm-init + mvm-agent" 256
