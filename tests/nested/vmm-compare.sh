#!/bin/bash
# vmm-compare.sh WORKLOAD [N] — the same guest work under mvm and under QEMU
# (-M microvm -accel kvm -cpu host) in the same nested box, interleaved, N
# rounds each (default 3): whose bug is a guest's fault? (issue 26)
#
#   cpuid     the guest kernel's own XSAVE verdict ("XSAVE consistency
#             problem") and its CPUID leaves 1, 7, 0xD, 0x80000001 (a
#             diffable dump per VMM), plus how many XSETBV exits the box's
#             KVM saw during one mvm boot (kvm_exit tracepoint)
#   chromium  the browser image: mvm-browser-start, then one page through
#             CDP (tests/integration/cdp_nav.py); 2 vCPUs, 1536 MiB
#   write     1 GiB written with fsync to a raw virtio disk; 1 vCPU, 384 MiB
#
# Same kernel (make guest's vmlinux), same command-line flags (the mvm base
# line's, nopku included), same vCPUs and memory. QEMU gets a busybox
# initramfs that mounts the image the way mvm's init does. Verdicts (OK,
# TRIPLE-FAULT, PANIC, OTHER) append to build/vmm-compare/results.txt; a
# round already recorded there is skipped, so a rerun after a box hang
# resumes. Not part of `make test`: it takes minutes per round.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/vmm-compare
what=${1:-}
n=${2:-3}
case "$what" in cpuid | chromium | write) ;; *) echo "usage: $0 cpuid|chromium|write [N]" >&2; exit 2 ;; esac
case "$n" in '' | *[!0-9]*) echo "vmm-compare: N must be a number" >&2; exit 2 ;; esac
cache=${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}
images=${MVM_IMAGE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mvm/images}
# make guest's kernel, found as tools/build-kernel.sh names it; mvm gets it
# by --kernel too, so both VMMs boot the same file.
key=$( (cat "$root/guest/kernel.config"; dpkg-query -W -f '${Version}\n' linux-source-6.1) | sha256sum | cut -c1-16)
kdir=$cache/kernel-$key
[ -f "$kdir/vmlinux" ] || { echo "vmm-compare: no guest kernel at $kdir (make guest)" >&2; exit 2; }
cmdline="quiet reboot=t panic=-1 nomodule swiotlb=noforce cryptomgr.notests tsc=reliable no_timer_check io_delay=none nopku"

# initramfs NAME INIT [FILE...]: busybox, INIT as /init, FILEs in /.
initramfs() {
	local name=$1 init=$2 d
	shift 2
	d=$(mktemp -d) || exit 1
	mkdir -p "$d/bin" "$d/proc" "$d/sys" "$d/dev"
	cp /bin/busybox "$d/bin/" && cp "$init" "$d/init" && chmod 755 "$d/init" &&
		{ [ $# = 0 ] || cp "$@" "$d/"; } || exit 1
	(cd "$d" && find . | cpio -o -H newc -R 0:0 --quiet) >"$out/$name.cpio" || exit 1
	rm -rf "$d"
}

build() {
	mkdir -p "$out"
	[ -x /bin/busybox ] && command -v cpio >/dev/null || { echo "vmm-compare: needs busybox-static and cpio" >&2; exit 2; }
	gcc -O2 -Wall -static -o "$out/cpuid-dump" "$root/tests/nested/cpuid-dump.c" || exit 1
	cat >"$out/cpuid.init" <<-'EOF'
	#!/bin/busybox sh
	/bin/busybox mount -t devtmpfs dev /dev; exec </dev/console >/dev/console 2>&1
	/bin/busybox --install -s /bin
	mount -t proc proc /proc
	echo "=== PROBE"
	dmesg | grep -E 'XSAVE consistency|CPUID\[0d' ; /cpuid-dump
	echo "=== PROBE-END"; echo WORK-DONE; echo QEMU-POWEROFF; reboot -f
	EOF
	initramfs cpuid "$out/cpuid.init" "$out/cpuid-dump"
	cat >"$out/chromium.sh" <<-'EOF'
	#!/bin/sh
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	ip link set lo up 2>/dev/null
	MVM_BROWSER_TIMEOUT=600 mvm-browser-start; echo "WORK start rc=$?"
	CDP_TIMEOUT=300 python3 /tmp/cdp_nav.py http://127.0.0.1:6080/vnc.html | cut -c1-40
	echo "WORK rc=$?"; echo WORK-DONE
	EOF
	cp "$root/tests/integration/cdp_nav.py" "$out/"
	# QEMU's side of what mvm's init does for a root image (guest/init).
	cat >"$out/chromium.init" <<-'EOF'
	#!/bin/busybox sh
	/bin/busybox mount -t devtmpfs dev /dev; exec </dev/console >/dev/console 2>&1
	/bin/busybox --install -s /bin
	mount -t proc proc /proc; mount -t sysfs sys /sys
	mkdir -p /newroot; mount -t ext4 /dev/vda /newroot || { echo QEMU-POWEROFF; reboot -f; }
	for d in proc sys dev; do mount --move /$d /newroot/$d; done
	mkdir -p /newroot/dev/pts /newroot/dev/shm
	mount -t devpts -o ptmxmode=0666 devpts /newroot/dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
	mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
	mount -t tmpfs -o mode=755 tmpfs /newroot/run
	cp /chromium.sh /cdp_nav.py /bin/busybox /newroot/tmp/; hostname mvm
	printf '%s\n' 'sh /tmp/chromium.sh </dev/null 2>&1; sync; echo QEMU-POWEROFF; /tmp/busybox reboot -f' >/newroot/tmp/run.sh
	exec switch_root /newroot /bin/sh /tmp/run.sh
	EOF
	initramfs chromium "$out/chromium.init" "$out/chromium.sh" "$out/cdp_nav.py"
	cat >"$out/write.init" <<-'EOF'
	#!/bin/busybox sh
	/bin/busybox mount -t devtmpfs dev /dev; exec </dev/console >/dev/console 2>&1
	/bin/busybox --install -s /bin
	dd if=/dev/zero of=/dev/vda bs=1M count=1024 conv=fsync; echo "WORK rc=$?"
	echo WORK-DONE; echo QEMU-POWEROFF; reboot -f
	EOF
	initramfs write "$out/write.init"
}

if [ "${MVM_IN_NESTED_BOX:-}" != 1 ] && [ "${VMM_COMPARE_INSIDE:-}" != 1 ]; then
	build
	export VMM_COMPARE_INSIDE=1
	exec "$root/tests/nested/maybe-nested.sh" "$0" "$@"
fi

# ------------------------------------------------------------ in the box ----
mvm=$root/build/mvm
res=$out/results.txt
touch "$res"

# qemu LOG SMP MEM INITRD [QEMU ARGS...]
qemu() {
	local log=$1 smp=$2 mem=$3 initrd=$4
	shift 4
	timeout 1200 qemu-system-x86_64 -M microvm,acpi=off -accel kvm -cpu host -smp "$smp" -m "$mem" \
		-nodefaults -no-user-config -display none -serial stdio -no-reboot \
		-kernel "$kdir/vmlinux" -initrd "$initrd" "$@" \
		-append "console=ttyS0 $cmdline" >"$log" 2>&1
}

# verdict VMM RC LOG: reboot=t makes QEMU's planned end a triple fault too,
# so for QEMU one before the QEMU-POWEROFF marker is the crash.
verdict() {
	if grep -q 'triple-faulted' "$3"; then echo TRIPLE-FAULT
	elif grep -q 'Kernel panic' "$3"; then echo PANIC
	elif grep -q WORK-DONE "$3" && ! grep -q 'rc=[1-9]' "$3"; then echo OK
	elif [ "$1" = qemu ] && [ "$2" = 0 ] && ! grep -q QEMU-POWEROFF "$3"; then echo TRIPLE-FAULT
	else echo OTHER; fi
}

round() { # VMM I
	local vmm=$1 i=$2 log=$out/log.$what.$1.$2 rc disk=/tmp/vmm-compare.raw
	case $what.$vmm in
	cpuid.mvm) timeout 300 "$mvm" run --kernel "$kdir/vmlinux" --initrd "$out/cpuid.cpio" \
		--console --cpus 2 -- true >"$log" 2>&1 ;;
	cpuid.qemu) qemu "$log" 2 256 "$out/cpuid.cpio" ;;
	chromium.mvm) timeout 1200 "$mvm" run --kernel "$kdir/vmlinux" --image browser --memory 1536M --cpus 2 --console \
		--copy "$out/chromium.sh:/tmp/chromium.sh" --copy "$out/cdp_nav.py:/tmp/cdp_nav.py" \
		-- sh /tmp/chromium.sh >"$log" 2>&1 ;;
	chromium.qemu) qemu "$log" 2 1536 "$out/chromium.cpio" \
		-drive "file=$images/browser.ext4,format=raw,if=none,id=d0,snapshot=on" \
		-device virtio-blk-device,drive=d0 ;;
	write.*) rm -f "$disk"; truncate -s 1200M "$disk"
		if [ "$vmm" = mvm ]; then
			timeout 900 "$mvm" run --kernel "$kdir/vmlinux" --cpus 1 --memory 384M --disk "$disk" --console -- sh -c \
				'dd if=/dev/zero of=/dev/vda bs=1M count=1024 conv=fsync; echo "WORK rc=$?"; echo WORK-DONE' \
				>"$log" 2>&1
		else
			qemu "$log" 1 384 "$out/write.cpio" -drive "file=$disk,format=raw,if=none,id=d0" \
				-device virtio-blk-device,drive=d0
		fi ;;
	esac
	rc=$?
	rm -f "$disk"
	[ "$i" != 0 ] || return 0
	echo "$what $vmm $i $(verdict "$vmm" "$rc" "$log") rc=$rc" | tee -a "$res"
}

if [ "$what" = cpuid ] && ! grep -q '^cpuid trace ' "$res"; then
	t=/sys/kernel/tracing
	mount -t tracefs nodev $t 2>/dev/null
	# SVM exit codes: 0x72 CPUID, 0x8d XSETBV.
	echo 'exit_reason == 114 || exit_reason == 141' >$t/events/kvm/kvm_exit/filter
	echo >$t/trace; echo 1 >$t/events/kvm/kvm_exit/enable
	round mvm 0
	echo 0 >$t/events/kvm/kvm_exit/enable
	echo "cpuid trace: $(grep -c 'reason xsetbv' $t/trace) XSETBV and $(grep -c 'reason cpuid' $t/trace) CPUID exits in one mvm boot" | tee -a "$res"
fi
for i in $(seq 1 "$n"); do
	for vmm in mvm qemu; do
		grep -q "^$what $vmm $i " "$res" || round $vmm "$i"
	done
done
for vmm in mvm qemu; do
	echo "$what $vmm: $(grep -c "^$what $vmm [0-9]* OK" "$res") OK, $(grep -c "^$what $vmm [0-9]* TRIPLE-FAULT" "$res") triple faults, $(grep -c "^$what $vmm [0-9]* " "$res") rounds"
done
if [ "$what" = cpuid ]; then
	for vmm in mvm qemu; do
		grep -h 'XSAVE consistency' "$out/log.cpuid.$vmm.1" | tr -d '\r' | sed "s/^/$vmm: /" | head -1
		tr -d '\r' <"$out/log.cpuid.$vmm.1" | grep -E '^(CPUID|XCR0)' >"$out/cpuid.$vmm.txt"
	done
	diff "$out/cpuid.mvm.txt" "$out/cpuid.qemu.txt" && echo "cpuid: the same leaves under both"
fi
exit 0
