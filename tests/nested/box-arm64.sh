#!/bin/bash
# box-arm64.sh — the arm64 box, first stage (issue 31): QEMU TCG emulating an
# Armv8 CPU with EL2 (-M virt,virtualization=on,gic-version=3 -cpu max) boots
# Debian's arm64 kernel, where KVM is built in, so /dev/kvm appears inside.
# Its initramfs holds only busybox (arm64, from Debian's busybox-static) and
# tests/nested/arm64-kvm-probe.c, which drives mvm's arm64 KVM calls against
# that /dev/kvm, then tests/nested/arm64-boot.c: mvm's arm64 VMM code boots
# the same Debian kernel as a guest of that KVM (two vCPUs, 256 MiB, the
# 16550 console, and four of mvm's own virtio-mmio devices from devices/,
# described in the device tree: virtio-rng, virtio-blk over a 512 KiB
# file of random bytes made once in the cache, virtio-console into a file,
# virtio-vsock on a Unix socket). Its initramfs's /init,
# tests/nested/arm64-guest-init.c, loads Debian's virtio_mmio, virtio-rng,
# virtio_blk, virtio_console and vsock modules (taken from the same kernel
# package), reads /dev/hwrng and all of /dev/vda, prints what answered and
# the disk's cksum, writes a line to /dev/hvc0, talks to arm64-boot over
# vsock, and powers off through PSCI. Its console lines come back
# as "arm64-guest: ...". The arm64-boot program is dynamic (libfdt has no
# static library in Debian): the aarch64 loader, libc and libfdt.so.1 of
# Debian's multiarch packages go into the box's initramfs with it.
#
#   box-arm64.sh prepare   fetch the kernel and busybox .debs (cached, never
#                          installed), build the probe and the initramfs
#   box-arm64.sh probe     boot the box; exit 0 when /dev/kvm exists, the
#                          probe passed and the guest booted and powered off
#   box-arm64.sh prepare-mvm  the same for the mvm mode (builds make
#                          arm64-mvm and the box's initramfs; no box)
#   box-arm64.sh mvm       boot the box with the real aarch64 mvm
#                          (arm64-mvm.lib); exit 0 when `mvm run` returned
#                          the guest command's output and exit status and
#                          a created sandbox ran commands, copied files,
#                          met its network allowlist, was rolled back to a
#                          checkpoint and started a second one as a
#                          template
#
# MVM_ARM64_BOX_GIC=2 gives the box a GICv2 (with its virtualization
# extensions): KVM inside then has no vGICv3 and the probe's GIC falls back.
#
# It takes the nested box's lock (box.sh): never two TCG boxes at once.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache_root="${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}"
cache="$cache_root/nested-arm64"
timeout_s="${MVM_ARM64_BOX_TIMEOUT:-900}"
ARM64_CC="${ARM64_CC:-aarch64-linux-gnu-gcc}"

die() { echo "arm64-box: $*" >&2; exit 2; }

# One arm64 .deb by package name, downloaded once into $cache.
fetch_deb() {
	local pkg=$1 deb tmp
	deb=$(ls "$cache/${pkg}"_*_arm64.deb 2>/dev/null | head -1)
	if [ -z "$deb" ]; then
		echo "arm64-box: downloading $pkg:arm64 (once) into $cache" >&2
		tmp=$(mktemp -d "$cache/dl.XXXXXX")
		(cd "$tmp" && apt-get -qq download "$pkg:arm64" 2>&1 | grep -v unsandboxed >&2)
		deb=$(ls "$tmp"/*.deb 2>/dev/null | head -1)
		[ -n "$deb" ] || { rm -rf "$tmp"; die "apt-get download $pkg:arm64 failed (dpkg --add-architecture arm64; apt-get update)"; }
		mv "$deb" "$cache/" && rm -rf "$tmp"
		deb=$(ls "$cache/${pkg}"_*_arm64.deb | head -1)
	fi
	echo "$deb"
}

write_init() {
	cat <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
echo "arm64-box: $(uname -r) $(uname -m), $(grep -c ^processor /proc/cpuinfo) CPUs"
dmesg | grep -i -E 'kvm|vgic' | sed 's/^/arm64-box: dmesg: /' | head -n 12
if [ -c /dev/kvm ]; then
	echo "arm64-box: /dev/kvm present"
	/probe && echo "arm64-box: RESULT ok" || echo "arm64-box: RESULT probe failed"
	MVM_ARM64_BOOT_CPUS=2 MVM_ARM64_BOOT_RNG=1 MVM_ARM64_BOOT_DISK=/guest/disk.img \
	MVM_ARM64_BOOT_HVC=/hvc0.out MVM_ARM64_BOOT_VSOCK=/vsock.sock LD_LIBRARY_PATH=/lib/aarch64-linux-gnu /arm64-boot /guest/Image /guest/initrd.cpio \
		"console=ttyS0 earlycon=uart8250,mmio,0x9000000 panic=-1" &&
		echo "arm64-box: BOOT ok" || echo "arm64-box: BOOT failed"
else
	echo "arm64-box: RESULT no /dev/kvm"
fi
poweroff -f
INIT
}

# The kernel Image the inner guest boots. Debian 12's arm64 vmlinuz is
# already a plain Image (an EFI-stub PE header with "ARM\x64" at byte 56,
# not compressed); a gzip one (other releases) is unwrapped here, once.
guest_image() {
	local magic
	magic=$(dd if="$KIMG" bs=1 skip=56 count=4 2>/dev/null)
	if [ "$magic" = "ARMd" ]; then
		GIMG="$KIMG"
		return 0
	fi
	GIMG="${KIMG%.vmlinuz}.Image"
	[ -s "$GIMG" ] && return 0
	case "$(od -An -tx1 -N2 "$KIMG" | tr -d ' ')" in
	1f8b) gzip -dc <"$KIMG" >"$GIMG.tmp" && mv "$GIMG.tmp" "$GIMG" ;;
	*) echo "arm64-box: $KIMG is neither an Image nor gzip (EFI zboot is not unwrapped yet)" >&2
	   return 1 ;;
	esac
}

# arm64-boot (mvm's arm64 VMM code, dynamic: libfdt) and the guest's /init
# (static), for aarch64.
build_boot() {
	local inc="$top/build/arm64/include" src
	mkdir -p "$inc"
	cp /usr/include/libfdt.h /usr/include/libfdt_env.h /usr/include/fdt.h "$inc/" || return 1
	# The arm64 code, and the neutral device code it hosts (srcs.list's
	# host and devices kinds; the seam kind is the aarch64 mvm's).
	src=$(ls "$top"/vmm/arch/arm64/*.c "$top"/vmm/arch/arm64/kvm/*.c
		sed -n 's,^\(host\|devices\) ,'"$top"'/,p' "$top/vmm/arch/arm64/srcs.list")
	# shellcheck disable=SC2086
	# The Makefile's warning set (WARN).
	"$ARM64_CC" -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow \
		-Wstrict-prototypes -Wformat=2 -Wno-format-truncation -Wvla -Wimplicit-fallthrough \
		-D_GNU_SOURCE -O2 -I"$top" -isystem "$inc" -o "$top/build/arm64/arm64-boot" "$here/arm64-boot.c" \
		"$here/arm64-noseccomp.c" $src -L/usr/lib/aarch64-linux-gnu -l:libfdt.so.1 -lpthread ||
		return 1
	"$ARM64_CC" -std=gnu11 -Wall -Wextra -Werror -O2 -static \
		-o "$top/build/arm64/guest-init" "$here/arm64-guest-init.c"
}

# The disk the inner guest reads: random bytes, made once (the box checks
# the guest's cksum of /dev/vda against this file's).
disk_image() {
	DISK="$cache/disk-512k.img"
	[ -s "$DISK" ] && return 0
	head -c 524288 /dev/urandom >"$DISK.tmp" && mv "$DISK.tmp" "$DISK"
}

# Into the box's initramfs under $1/root: arm64-boot with its loader and
# libraries, the guest's kernel Image, its disk, and its initramfs (/init
# and /mod/*.ko: the virtio-mmio modules of the kernel package $2).
stage_boot() {
	local root=$1/root lib=/usr/lib/aarch64-linux-gnu m
	guest_image || return 1
	disk_image || return 1
	mkdir -p "$root/lib/aarch64-linux-gnu" "$root/guest" "$1/gi/mod" "$1/kmod" || return 1
	dpkg-deb --fsys-tarfile "$2" | tar -x -C "$1/kmod" --wildcards \
		'./lib/modules/*/virtio/virtio_mmio.ko' './lib/modules/*/hw_random/virtio-rng.ko' \
		'./lib/modules/*/block/virtio_blk.ko' './lib/modules/*/char/virtio_console.ko' \
		'./lib/modules/*/vmw_vsock/vsock.ko' './lib/modules/*/vmw_vsock/vmw_vsock_virtio_transport*.ko' ||
		return 1
	for m in virtio_mmio virtio-rng virtio_blk virtio_console vsock \
		vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport; do
		find "$1/kmod" -name "$m.ko" -exec cp {} "$1/gi/mod/" \; || return 1
	done
	cp "$DISK" "$root/guest/disk.img" || return 1
	cp -L "$lib/ld-linux-aarch64.so.1" "$root/lib/ld-linux-aarch64.so.1" &&
		cp -L "$lib/libc.so.6" "$lib/libfdt.so.1" "$root/lib/aarch64-linux-gnu/" || return 1
	cp "$top/build/arm64/arm64-boot" "$root/arm64-boot" &&
		cp "$GIMG" "$root/guest/Image" &&
		cp "$top/build/arm64/guest-init" "$1/gi/init" || return 1
	chmod 755 "$1/gi/init" "$root/arm64-boot"
	(cd "$1/gi" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
		>"$root/guest/initrd.cpio"
}

prepare() {
	local pkg kdeb bdeb key tmp
	command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || die "need apt-get and dpkg-deb"
	command -v "$ARM64_CC" >/dev/null || die "$ARM64_CC missing (make deps)"
	mkdir -p "$cache" || die "cannot create $cache"
	pkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*-arm64\)\(:arm64\)\{0,1\}$/\1/p' | head -1)
	[ -n "$pkg" ] || pkg=$(basename "$(ls -t "$cache"/linux-image-*_arm64.deb 2>/dev/null | head -1)" | sed 's/_.*//')
	[ -n "$pkg" ] || die "no arm64 kernel package known to apt (dpkg --add-architecture arm64; apt-get update)"
	kdeb=$(fetch_deb "$pkg") || exit 2
	bdeb=$(fetch_deb busybox-static) || exit 2
	KIMG="$cache/$pkg.vmlinuz"
	if [ ! -s "$KIMG" ]; then
		dpkg-deb --fsys-tarfile "$kdeb" | tar -xO --wildcards './boot/vmlinuz-*' >"$KIMG.tmp" &&
			mv "$KIMG.tmp" "$KIMG" || die "cannot extract the kernel from $kdeb"
	fi
	# The probe: mvm's arm64 KVM calls, static (the box has no aarch64 libc).
	mkdir -p "$top/build/arm64"
	"$ARM64_CC" -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE -O2 -static \
		-I"$top" -o "$top/build/arm64/kvm-probe" "$here/arm64-kvm-probe.c" \
		"$top"/vmm/arch/arm64/kvm/vcpu_arm64.c "$top"/vmm/arch/arm64/kvm/vgic.c \
		"$top"/vmm/arch/arm64/regs.c \
		"$top"/vmm/arch/arm64/reg_record.c "$top"/vmm/arch/arm64/gic.c ||
		die "cannot build the probe"
	build_boot || exit 2
	disk_image || die "cannot make the guest's disk in $cache"
	key=$( (echo "$pkg"; write_init; sha256sum <"$bdeb"; sha256sum <"$top/build/arm64/kvm-probe"
		cat "$top/build/arm64/arm64-boot" "$top/build/arm64/guest-init" "$DISK" | sha256sum) |
		sha256sum | cut -c1-16)
	INITRD="$cache/initramfs-$key.cpio"
	[ -s "$INITRD" ] && return 0
	find "$cache" -maxdepth 1 -name 'initramfs-*.cpio' -mtime +7 -delete 2>/dev/null
	tmp=$(mktemp -d "$cache/ir.XXXXXX")
	mkdir -p "$tmp/root/bin" "$tmp/root/proc" "$tmp/root/sys" "$tmp/root/dev" "$tmp/bb"
	dpkg-deb -x "$bdeb" "$tmp/bb" && cp "$tmp/bb/bin/busybox" "$tmp/root/bin/busybox" ||
		die "no busybox in $bdeb"
	cp "$top/build/arm64/kvm-probe" "$tmp/root/probe"
	stage_boot "$tmp" "$kdeb" || die "cannot stage the guest boot"
	write_init >"$tmp/root/init"
	chmod 755 "$tmp/root/init" "$tmp/root/probe"
	(cd "$tmp/root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
		>"$INITRD.tmp" && mv "$INITRD.tmp" "$INITRD" || die "cpio failed"
	rm -rf "$tmp"
}

probe() {
	local log start rc want
	command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 missing (apt-get install qemu-system-arm)"
	prepare
	# The x86 box's lock (box.sh): two TCG boxes on a small host starve each other.
	mkdir -p "$cache_root/nested" && exec 9>"$cache_root/nested/box.lock"
	if ! flock -n 9; then
		echo "arm64-box: another nested box is running on this machine; waiting for it" >&2
		flock 9
	fi
	log=$(mktemp "${TMPDIR:-/tmp}/mvm-arm64-box.XXXXXX")
	start=$(date +%s)
	# QEMU boots the (gzip) Image itself, at EL2 with virtualization=on: the
	# kernel finds EL2 and brings up KVM (VHE or nVHE) and its vGICv3.
	timeout "$timeout_s" qemu-system-aarch64 -M "virt,virtualization=on,gic-version=${MVM_ARM64_BOX_GIC:-3}" \
		-accel tcg,thread=multi -cpu max -smp 2 -m 1024 -nographic -no-reboot \
		-kernel "$KIMG" -initrd "$INITRD" \
		-append "console=ttyAMA0 quiet loglevel=3 panic=-1 rdinit=/init" </dev/null >"$log" 2>&1
	rc=$?
	grep -a '^arm64-box\|^arm64-probe\|^arm64-boot\|^arm64-guest' "$log" | tr -d '\r'
	echo "arm64-box: QEMU exit $rc after $(( $(date +%s) - start )) s (log $log)"
	# The guest's own userland spoke through the console (the tty path,
	# which waits for the UART's interrupt) with both vCPUs online, read
	# entropy from mvm's virtio-rng and the disk file's exact bytes through
	# mvm's virtio-blk, wrote a line through mvm's virtio-console, talked
	# both ways over mvm's virtio-vsock (all found
	# in the device tree, their interrupts SPIs through irqfds), and the run
	# ended by power-off.
	want=$(cksum <"$DISK")
	echo "arm64-box: the disk file's cksum on the host: $want"
	grep -aq 'arm64-box: RESULT ok' "$log" && grep -aq 'arm64-box: BOOT ok' "$log" &&
		grep -aq '^arm64-guest: mvm-arm64-init: hello.*CPUs online 0-1' "$log" &&
		grep -aq "^arm64-guest: mvm-arm64-init: rng: 64 bytes from virtio_rng\.0, " "$log" &&
		tr -d '\r' <"$log" | grep -aq "^arm64-guest: mvm-arm64-init: blk: /dev/vda cksum $want\$" &&
		grep -aq '^arm64-boot: hvc0: mvm-arm64-init: hello through virtio-console' "$log" &&
		grep -aq '^arm64-guest: mvm-arm64-init: vsock: the host answered "pong: hello over vsock"' "$log" &&
		grep -aq '^arm64-boot: vsock: port 5000 got "hello over vsock"' "$log"
}

# shellcheck source=tests/nested/arm64-mvm.lib
. "$here/arm64-mvm.lib"

case "${1:-}" in
prepare) prepare && echo "arm64-box: kernel $KIMG, initramfs $INITRD" ;;
prepare-mvm) prepare_mvm && echo "arm64-box: kernel $KIMG, initramfs $MVM_INITRD" ;;
probe) probe ;;
mvm) mvm_box ;;
*) die "usage: box-arm64.sh prepare|probe|prepare-mvm|mvm" ;;
esac
