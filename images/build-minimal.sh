#!/bin/sh
# `mvm image build minimal`: busybox-static plus the guest init and agent as an
# ext4 root image. Seconds, no network, no root, no mounts.
here=$(cd "$(dirname "$0")" && pwd)
STEPS=2
. "$here/image-lib.sh"
guest=${MVM_GUEST_DIR:-$here/../build/guest}
image_stage

step "staging busybox $(/bin/busybox 2>&1 | head -1 | awk '{print $2}') and the guest init/agent"
"$here/../tools/stage-userland.sh" "$stage" "$guest"
mkdir -p "$stage/var/tmp" "$stage/home"
chmod 1777 "$stage/tmp" "$stage/var/tmp"
chmod 700 "$stage/root"
cat > "$stage/etc/os-release" <<OS
NAME="mvm minimal"
ID=mvm-minimal
PRETTY_NAME="mvm minimal (busybox)"
OS

image_finish "busybox-static + mvm-init + mvm-agent" 256
