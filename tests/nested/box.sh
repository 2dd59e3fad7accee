#!/bin/bash
# box.sh — run a command inside a "nested KVM box": QEMU/TCG emulating an AMD
# CPU with SVM (-cpu max), booting Debian's own 6.1 kernel, which loads kvm_amd
# and so offers a working /dev/kvm even on hosts (and CI) that have none.
#
#   box.sh prepare          fetch the kernel, build the initramfs (cached)
#   box.sh run CMD [ARGS]   run CMD in the box; exits with CMD's exit code
#
# The box sees the host's own userland (host / shared read-only over 9p with a
# tmpfs overlay on top), the checkout read-write at the same absolute path and
# the mvm cache dir read-only, so the same tools and paths work inside.
# Usually called through maybe-nested.sh. Knobs: see tests/nested/README.md.
set -u

here=$(cd "$(dirname "$0")" && pwd)
cache_root="${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}"
cache="$cache_root/nested"
timeout_s="${MVM_NESTED_TIMEOUT:-3000}"
# A box that has not reached the command after this long will never do so.
boot_timeout_s="${MVM_NESTED_BOOT_TIMEOUT:-300}"
# A box whose heartbeat stops this long is frozen (the outer kernel's rare
# soft lockup): give up on it early rather than waiting for the timeout.
stall_s="${MVM_NESTED_STALL:-90}"

die() { echo "nested: $*" >&2; exit 2; }
# bash's own clock: the watch loop polls often and should not fork date.
now_ms() { local r=${EPOCHREALTIME/[.,]/}; NOW=$((r / 1000)); }

# Modules the box loads, in any order: the dependency closure is resolved from
# modinfo at build time. KVM, the 9p/virtio transport, overlayfs for the root;
# the optional ones (network/vsock tests) are skipped if the kernel lacks them.
MODS_REQUIRED="irqbypass kvm ccp kvm_amd virtio_pci virtio_console 9pnet 9pnet_virtio netfs fscache 9p overlay"
# inet_diag, tcp_diag: NETLINK_SOCK_DIAG for TCP, the browser relay's owner check
# (no modprobe in the box: the host root has no modules of this kernel).
MODS_OPTIONAL="veth tun vhost_vsock loop inet_diag tcp_diag ${MVM_NESTED_MODULES:-}"

# ---------------------------------------------------------------- kernel ----
# Debian's kernel, unpacked from the .deb, never installed on the host. The
# .deb stays cached (70 MB) so a module-list change needs no new download.
fetch_kernel() {
	local pkg="" deb tmp
	# Asking apt costs ~1 s per run; the answer changes rarely, so it is
	# cached for a day.
	if [ -n "$(find "$cache/kernel-package" -mtime -1 2>/dev/null)" ]; then
		pkg=$(cat "$cache/kernel-package")
	fi
	[ -n "$pkg" ] || pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
	if [ -z "$pkg" ]; then
		# No apt metadata (e.g. lists not fetched yet): use a cached kernel.
		deb=$(ls -t "$cache"/linux-image-*.deb 2>/dev/null | head -1)
		[ -n "$deb" ] || die "cannot find Debian's kernel package: 'apt-cache depends linux-image-amd64' is empty (run apt-get update)"
		pkg=$(basename "$deb" | sed 's/_.*//')
	fi
	KPKG=$pkg
	deb=$(ls "$cache/${pkg}"_*.deb 2>/dev/null | head -1)
	if [ -z "$deb" ]; then
		echo "nested: downloading $pkg (once, ~70 MB) into $cache" >&2
		mkdir -p "$cache" || die "cannot create $cache"
		tmp=$(mktemp -d "$cache/dl.XXXXXX")
		# apt-get warns that _apt cannot write a private dir; that is harmless.
		(cd "$tmp" && apt-get -qq download "$pkg" 2>&1 | grep -v unsandboxed >&2)
		deb=$(ls "$tmp"/*.deb 2>/dev/null | head -1)
		[ -n "$deb" ] || { rm -rf "$tmp"; die "apt-get download $pkg failed"; }
		mv "$deb" "$cache/" && rm -rf "$tmp"
		deb=$(ls "$cache/${pkg}"_*.deb | head -1)
	fi
	KDEB=$deb
	[ "$(cat "$cache/kernel-package" 2>/dev/null)" = "$pkg" ] &&
		[ -n "$(find "$cache/kernel-package" -mtime -1)" ] || echo "$pkg" >"$cache/kernel-package"
	KIMG="$cache/$pkg.vmlinuz"
	if [ ! -s "$KIMG" ]; then
		dpkg-deb --fsys-tarfile "$KDEB" | tar -xO --wildcards './boot/vmlinuz-*' >"$KIMG.tmp" &&
			mv "$KIMG.tmp" "$KIMG" || die "cannot extract the kernel from $KDEB"
	fi
	# Under TCG the bzImage's own xz decompression costs ~4-5 s of every
	# boot. Unpack the vmlinux ELF once on the host instead: QEMU boots it
	# through its PVH entry (Debian builds CONFIG_PVH=y). Fall back to the
	# bzImage if that fails.
	local vml="$cache/$pkg.vmlinux" off
	if [ ! -s "$vml" ] && command -v xz >/dev/null; then
		off=$(LC_ALL=C grep -abo $'\xfd7zXZ' "$KIMG" | head -1 | cut -d: -f1)
		if [ -n "$off" ] && tail -c +$((off + 1)) "$KIMG" |
			xz -dc --single-stream >"$vml.tmp" 2>/dev/null &&
			[ "$(head -c 4 "$vml.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			mv "$vml.tmp" "$vml"
		else
			rm -f "$vml.tmp"
		fi
	fi
	[ -s "$vml" ] && KIMG=$vml
}

# ------------------------------------------------------------- initramfs ----
# Stage 1 (/init, busybox sh, in the initramfs): load modules, build the new
# root (9p host root + tmpfs overlay, then the shares at their host paths) and
# switch_root into it. Stage 2 (/.mvm-nested/stage2, busybox sh as PID 1 in
# the host's userland): run the command, write its exit code to the control
# share, power off. A real switch_root (not chroot) matters: user namespaces
# and pivot_root refuse to work inside a chroot.
write_init() {
	cat <<'EOF'
#!/bin/busybox sh
export PATH=/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /modules.list); do
	insmod "/mod/$m" 2>/tmp/err || case $m in
		kvm*) echo "nested: insmod $m failed: $(cat /tmp/err) (no SVM in the outer CPU?)" ;;
		*) echo "nested: insmod $m failed: $(cat /tmp/err)" ;;
	esac
done
fail() { echo "nested: stage1: $*"; poweroff -f; reboot -f; }
o="trans=virtio,version=9p2000.L,msize=512000"
mkdir -p /ctl /lower /rw /newroot
mount -t 9p -o "$o" mvmctl /ctl || fail "cannot mount the control share"
mount -t 9p -o "$o,ro,cache=loose" mvmroot /lower || fail "cannot mount the host root"
mount -t tmpfs -o mode=755 rw /rw && mkdir /rw/up /rw/wk
mount -t overlay -o lowerdir=/lower,upperdir=/rw/up,workdir=/rw/wk root /newroot ||
	fail "cannot mount the overlay root"
n=/newroot
mount -t proc proc $n/proc; mount -t sysfs sys $n/sys
mount -t devtmpfs dev $n/dev; mkdir -p $n/dev/pts $n/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $n/dev/pts
mount -t tmpfs -o mode=1777 shm $n/dev/shm
mount -t cgroup2 cgroup2 $n/sys/fs/cgroup 2>/dev/null
ln -sf /proc/self/fd $n/dev/fd; ln -sf /proc/self/fd/0 $n/dev/stdin
ln -sf /proc/self/fd/1 $n/dev/stdout; ln -sf /proc/self/fd/2 $n/dev/stderr
# /tmp and /run first: the checkout may live below them and must stay visible.
mount -t tmpfs -o mode=1777 tmp $n/tmp; mount -t tmpfs -o mode=755 run $n/run
# The control share lives beside stage 2, not under /run: tests mount over
# /run (ip netns, tmpfs), and a hidden control dir looked like a hung box.
mkdir -p $n/.mvm-nested/ctl && mount --move /ctl $n/.mvm-nested/ctl
work=$(cat $n/.mvm-nested/ctl/work); cachedir=$(cat $n/.mvm-nested/ctl/cachedir)
mkdir -p "$n$work" && mount -t 9p -o "$o,cache=mmap" mvmwork "$n$work" ||
	fail "cannot mount the checkout at $work"
if [ -n "$cachedir" ]; then
	# Read-only and keyed by content (a new kernel is a new directory):
	# safe to cache, and mvm reads its guest kernel from here on every boot.
	mkdir -p "$n$cachedir" && mount -t 9p -o "$o,ro,cache=loose" mvmcache "$n$cachedir"
fi
mkdir -p $n/.mvm-nested && cp /bin/busybox /stage2 $n/.mvm-nested/
exec switch_root $n /.mvm-nested/stage2
EOF
}

write_stage2() {
	cat <<'EOF'
#!/.mvm-nested/busybox sh
bb=/.mvm-nested/busybox
ctl=/.mvm-nested/ctl
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 MVM_IN_NESTED_BOX=1
$bb ip link set lo up 2>/dev/null
[ -e /dev/kvm ] && $bb chmod 666 /dev/kvm
# The command talks to the host through a virtio console (hvc0 -> QEMU's
# stdout): the emulated UART manages only ~60 KB/s under TCG. ttyS0 keeps
# the kernel's own messages, which go to a log file, not into test output.
out=/dev/hvc0
[ -c $out ] || out=/dev/console
exec >$out 2>&1
# A tty would turn every \n into \r\n in the host's logs.
$bb stty -F $out -onlcr 2>/dev/null
. $ctl/env
# Handshake: the host prints its "booted in N s" line before the command's
# first byte of output.
: >$ctl/booted
i=0; while [ ! -e $ctl/go ] && [ $i -lt 100 ]; do $bb usleep 50000; i=$((i+1)); done
# Heartbeat for the host's watchdog (see run_once).
(while :; do : >$ctl/alive; $bb sleep 10; done) &
cd "$(cat $ctl/cwd)" || echo "nested: cannot cd to $(cat $ctl/cwd)"
/bin/sh $ctl/cmd </dev/null
rc=$?
# stty sets the line with TCSADRAIN: returns once the command's last bytes
# have reached QEMU, so the exit code never overtakes the output.
$bb stty -F $out -onlcr 2>/dev/null
# Flush writes (e.g. mmap'ed files on the checkout) before reporting: the
# host kills QEMU as soon as the exit code appears.
$bb sync
echo $rc >$ctl/rc.tmp && $bb mv $ctl/rc.tmp $ctl/rc
$bb poweroff -f; $bb reboot -f
EOF
}

# Print "dir/file.ko" paths of the modules named in $@ and everything they
# depend on, dependencies first, each once.
resolve_modules() {
	local moddir=$1 optional=$2; shift 2
	local m f
	for m in "$@"; do
		m=${m//-/_}
		case " $SEEN " in *" $m "*) continue ;; esac
		f=${KO[$m]:-}
		if [ -z "$f" ]; then
			[ "$optional" = 1 ] && continue
			die "module $m not found in $KPKG"
		fi
		SEEN="$SEEN $m"
		# shellcheck disable=SC2046
		resolve_modules "$moddir" 0 $("$MODINFO" -F depends "$f" | tr , ' ')
		echo "$f"
	done
}

build_initramfs() {
	local key tmp x m f
	key=$( (echo "$KPKG $MODS_REQUIRED $MODS_OPTIONAL"; write_init; write_stage2
		sha256sum </bin/busybox) | sha256sum | cut -c1-16)
	INITRD="$cache/initramfs-$key.cpio"
	[ -s "$INITRD" ] && return 0
	# Stale keys: only old ones go; another checkout may be using its own.
	find "$cache" -maxdepth 1 -name 'initramfs-*.cpio' -mtime +7 -delete 2>/dev/null
	command -v cpio >/dev/null || die "cpio missing (make deps)"
	[ -x /bin/busybox ] || die "/bin/busybox missing (package busybox-static; make deps)"
	# modinfo lives in /sbin, which a non-root PATH may lack.
	MODINFO=$(command -v modinfo || echo /sbin/modinfo)
	[ -x "$MODINFO" ] || die "modinfo missing (package kmod; make deps)"
	echo "nested: building the box initramfs (once)" >&2
	tmp=$(mktemp -d "$cache/ir.XXXXXX")
	x="$tmp/x"; mkdir -p "$x" "$tmp/root/mod" "$tmp/root/bin" "$tmp/root/proc" \
		"$tmp/root/sys" "$tmp/root/dev" "$tmp/root/tmp"
	dpkg-deb --fsys-tarfile "$KDEB" | tar -x -C "$x" --wildcards './lib/modules/*' ||
		die "cannot unpack modules from $KDEB"
	declare -gA KO=()
	while read -r f; do
		m=${f##*/}; m=${m%.ko}; KO[${m//-/_}]=$f
	done < <(find "$x/lib/modules" -name '*.ko')
	SEEN=""
	{ resolve_modules "$x" 0 $MODS_REQUIRED; resolve_modules "$x" 1 $MODS_OPTIONAL; } \
		>"$tmp/order" || { rm -rf "$tmp"; exit 2; }
	while read -r f; do
		cp "$f" "$tmp/root/mod/" && basename "$f" >>"$tmp/root/modules.list"
	done <"$tmp/order"
	cp /bin/busybox "$tmp/root/bin/busybox"
	write_init >"$tmp/root/init"; write_stage2 >"$tmp/root/stage2"
	chmod 755 "$tmp/root/init" "$tmp/root/stage2"
	# Uncompressed: decompressing under TCG costs more than reading 10 MB.
	(cd "$tmp/root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
		>"$INITRD.tmp" && mv "$INITRD.tmp" "$INITRD" || die "cpio failed"
	rm -rf "$tmp"
}

prepare() {
	command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
		die "need apt-get and dpkg-deb (Debian) to fetch the box kernel"
	fetch_kernel
	build_initramfs
}

# ------------------------------------------------------------------- run ----
# QEMU's -fsdev path option uses ',' as separator; ',,' escapes it.
qesc() { printf '%s' "${1//,/,,}"; }

# Shell-quote one word for the command file.
shq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

write_ctl() {
	local ctl=$1; shift
	local name a
	printf '%s\n' "$WORK" >"$ctl/work"
	printf '%s\n' "$SHARE_CACHE" >"$ctl/cachedir"
	printf '%s\n' "$PWD" >"$ctl/cwd"
	: >"$ctl/progress"
	# Environment the inner tests rely on: MVM_* (minus the runner's own
	# MVM_NESTED switch, or an inner maybe-nested.sh would nest again), CI, TERM.
	: >"$ctl/env"
	while IFS= read -r name; do
		case $name in MVM_NESTED | MVM_NESTED_WHY) continue ;; esac
		printf 'export %s=%s\n' "$name" "$(shq "${!name}")" >>"$ctl/env"
	done < <(compgen -e | grep -E '^(MVM_[A-Za-z0-9_]*|CI|TERM)$')
	echo 'export MVM_TEST_PROGRESS=/.mvm-nested/ctl/progress' >>"$ctl/env"
	{ printf 'exec'; for a in "$@"; do printf ' %s' "$(shq "$a")"; done; echo; } >"$ctl/cmd"
}

# QEMU's CPU seconds so far and its threads' scheduler states, from /proc.
# The main thread sleeps in its event loop either way; the vCPU threads say
# whether the box is idle (S) or spinning (R: in the hangs seen so far both
# vCPUs ran kernel code, the LAPIC timer pending, and userspace never ran).
qemu_cpu() {
	local st f states="" t rest
	read -r st </proc/"$1"/stat 2>/dev/null || { echo "gone"; return; }
	read -ra f <<<"${st##*) }"
	for t in /proc/"$1"/task/*/stat; do
		read -r rest <"$t" 2>/dev/null || continue
		rest=${rest##*) }
		states="$states${rest%% *}"
	done
	echo "thread states $states, $(( (f[11] + f[12]) / $(getconf CLK_TCK) )) s CPU over $(( (NOW - start) / 1000 )) s"
}

# One boot of the box. Returns CMD's exit code, or sets HUNG/DIED when no exit
# code came back.
run_once() {
	local ctl=$1 start booted_ms="" qpid qrc t lim reason
	rm -f "$ctl/booted" "$ctl/go" "$ctl/rc"
	local shares=(
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=root,mount_tag=mvmroot
		-fsdev "local,id=work,path=$(qesc "$WORK"),security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=work,mount_tag=mvmwork
		-fsdev "local,id=ctl,path=$(qesc "$ctl"),security_model=none"
		-device virtio-9p-pci,fsdev=ctl,mount_tag=mvmctl
	)
	[ -n "$SHARE_CACHE" ] && shares+=(
		-fsdev "local,id=cache,path=$(qesc "$SHARE_CACHE"),security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=cache,mount_tag=mvmcache)
	# qboot (shipped with QEMU) boots faster than SeaBIOS and prints nothing.
	local bios=()
	[ -f /usr/share/qemu/qboot.rom ] && bios=(-bios /usr/share/qemu/qboot.rom)
	now_ms; start=$NOW
	# stdin from /dev/null: QEMU must not put the user's terminal in raw mode,
	# so Ctrl-C still reaches this script.
	# MVM_BOX_ICOUNT=1 (or a -icount spec): the box's clock follows executed
	# instructions, not the host's, for clock-free measurement (issue 26;
	# icount needs single-threaded TCG). tests/nested/README.md has the verdict.
	local accel="tcg,thread=${MVM_NESTED_TCG_THREAD:-multi}" icount=()
	case "${MVM_BOX_ICOUNT:-0}" in
	0) ;;
	1) accel=tcg,thread=single; icount=(-icount shift=auto,sleep=on) ;;
	*) accel=tcg,thread=single; icount=(-icount "$MVM_BOX_ICOUNT") ;;
	esac
	qemu-system-x86_64 -M q35 -accel "$accel" "${icount[@]}" -cpu max -m 4096 -smp 2 \
		-nographic -no-reboot -nic none -vga none -monitor none \
		-serial "file:$ctl/console.log" -device virtio-serial-pci \
		-chardev stdio,id=out,signal=off -device virtconsole,chardev=out \
		"${bios[@]}" -kernel "$KIMG" -initrd "$INITRD" \
		-append "console=ttyS0 quiet loglevel=5 panic=-1 no_timer_check ${MVM_NESTED_APPEND:-}" \
		"${shares[@]}" ${MVM_NESTED_QEMU_ARGS:-} </dev/null &
	qpid=$!
	QPID=$qpid
	# Watch the box: print the boot line, enforce the time limits, and notice
	# a frozen box early through the guest's heartbeat file (rewritten every
	# 10 s; we delete it every 30 s and expect it back).
	reason=""
	local last_alive=$start last_check=$start tick=0.1
	while kill -0 "$qpid" 2>/dev/null; do
		now_ms; t=$NOW
		if [ -z "$booted_ms" ] && [ -e "$ctl/booted" ]; then
			booted_ms=$((t - start)); last_alive=$t; tick=0.5
			printf 'nested: %s; running in a nested KVM box (QEMU TCG -cpu max, Debian %s), outer boot %d.%d s\n' \
				"$WHY" "${KPKG#linux-image-}" $((booted_ms / 1000)) $((booted_ms % 1000 / 100))
			: >"$ctl/go"
		fi
		# Everything is flushed once rc exists; a clean guest shutdown
		# would only cost another second or two. SIGKILL: no QEMU message.
		if [ -e "$ctl/rc" ]; then
			kill -9 "$qpid" 2>/dev/null; break
		fi
		if [ -z "$booted_ms" ] && [ $((t - start)) -gt $((boot_timeout_s * 1000)) ]; then
			reason="did not boot within ${boot_timeout_s}s"; break
		fi
		if [ -n "$booted_ms" ] && [ $((t - last_check)) -gt 30000 ]; then
			last_check=$t
			[ -e "$ctl/alive" ] && { rm -f "$ctl/alive"; last_alive=$t; }
			if [ $((t - last_alive)) -gt $((stall_s * 1000)) ]; then
				reason="no heartbeat from the box for ${stall_s}s (MVM_NESTED_STALL)"; break
			fi
		fi
		if [ $((t - start)) -gt $((timeout_s * 1000)) ]; then
			reason="no exit code after ${timeout_s}s (MVM_NESTED_TIMEOUT)"
			[ $((t - last_alive)) -lt 60000 ] &&
				reason="$reason; the box was still alive, so the command itself may hang"
			break
		fi
		sleep $tick
	done
	if [ -n "$reason" ]; then
		# For the post-mortem: is QEMU spinning (guest livelock) or idle
		# (deadlock), or stopped by someone (state T)?
		reason="$reason; QEMU $(qemu_cpu "$qpid")"
		kill -9 "$qpid" 2>/dev/null
	fi
	# (stderr: bash would report our own SIGKILL as "Killed")
	wait "$qpid" 2>/dev/null; qrc=$?
	QPID=""
	# Keep the box's kernel console for a post-mortem (warnings and soft
	# lockup traces: loglevel=5 lets their stack dumps through).
	[ -d "$WORK/build" ] && cp "$ctl/console.log" "$WORK/build/nested-console$TAG.log" 2>/dev/null
	if [ -s "$ctl/rc" ]; then
		return "$(cat "$ctl/rc")"
	fi
	[ -n "$reason" ] || reason="QEMU exited ($qrc) before the command reported an exit code"
	HUNG=$reason
	return 0
}

run() {
	[ $# -ge 1 ] || die "usage: box.sh run CMD [ARGS...]"
	command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (make deps)"
	prepare
	WHY=${MVM_NESTED_WHY:-"no usable /dev/kvm"}
	# One of several boxes at once (tests/nested/shards.sh): its own logs.
	TAG=${MVM_NESTED_TAG:+-$MVM_NESTED_TAG}
	# The checkout: git top-level of the cwd, else the cwd itself.
	WORK=$(git rev-parse --show-toplevel 2>/dev/null) || WORK=$PWD
	WORK=$(cd "$WORK" && pwd -P)
	# The cache dir is shared unless it already lies inside the checkout
	# (mounting it read-only there would hide the rw view).
	SHARE_CACHE=""
	if [ -d "$cache_root" ]; then
		SHARE_CACHE=$(cd "$cache_root" && pwd -P)
		case "$SHARE_CACHE/" in "$WORK"/*) SHARE_CACHE="" ;; esac
	fi
	local rc attempt
	ctl=$(mktemp -d "${TMPDIR:-/tmp}/mvm-nested.XXXXXX") || die "mktemp failed"
	QPID=""
	trap 'rm -rf "$ctl"' EXIT
	trap '[ -n "$QPID" ] && kill -9 "$QPID" 2>/dev/null; exit 130' INT TERM
	write_ctl "$ctl" "$@"
	# One box at a time per machine: two TCG boxes on a small host starve
	# each other into timeouts (and make the outer kernel's soft lockups
	# likelier). Others queue here, before QEMU starts, so no time limit runs.
	if [ "${MVM_NESTED_LOCK:-1}" = 1 ] && command -v flock >/dev/null; then
		mkdir -p "$cache" && exec 9>"$cache/box.lock"
		if ! flock -n 9; then
			echo "nested: another nested box is running on this machine; waiting for it (MVM_NESTED_LOCK=0 skips)" >&2
			flock 9
		fi
	fi
	# A frozen box is retried; a command that keeps a progress file (the
	# integration suite: MVM_TEST_PROGRESS) resumes after its last finished
	# test. Retries continue while each attempt gets further, and stop after
	# three frozen attempts in a row without progress (on 2026-12-05 a full
	# suite saw six hangs, three of them about 30 s after a fresh boot).
	local attempt=0 stuck=0 before after max=${MVM_NESTED_ATTEMPTS:-10}
	while :; do
		attempt=$((attempt + 1))
		HUNG=""
		before=$(wc -l <"$ctl/progress")
		run_once "$ctl"; rc=$?
		# 75 with a reason on the control share: the suite found the box's
		# own kernel stalled or oopsed (run-all.sh's box_sick) and asks for
		# a fresh box, as if it had frozen.
		if [ -z "$HUNG" ] && [ "$rc" = 75 ] && [ -s "$ctl/progress.sick" ]; then
			HUNG="the suite asked for a fresh box: $(cat "$ctl/progress.sick")"
		fi
		[ -z "$HUNG" ] && return $rc
		after=$(wc -l <"$ctl/progress")
		if [ "$rc" = 75 ]; then
			echo "nested: box attempt $attempt/$max ended: $HUNG" >&2
		else
			echo "nested: nested box hung (attempt $attempt/$max): $HUNG" >&2
		fi
		if [ -s "$ctl/console.log" ] && [ "$rc" != 75 ]; then
			# A fresh box overwrites build/nested-console.log: keep this one.
			[ -d "$WORK/build" ] && cp "$ctl/console.log" "$WORK/build/nested-console$TAG.hung-$attempt.log" 2>/dev/null
			echo "nested: the box's kernel console (all of it: build/nested-console$TAG.hung-$attempt.log), its first oops lines, then its last lines:" >&2
			grep -E -m 12 -A 3 'BUG:|Oops|general protection|double fault|stack guard|kernel stack overflow|Call Trace' \
				"$ctl/console.log" | grep -v 'Unhandled WRMSR' | head -n 30 | sed 's/^/nested:   /' >&2
			echo "nested:   ..." >&2
			grep -v 'Unhandled WRMSR' "$ctl/console.log" | tail -n 15 | sed 's/^/nested:   /' >&2
		fi
		if [ "$after" -gt "$before" ]; then stuck=0; else stuck=$((stuck + 1)); fi
		[ "$stuck" -lt 3 ] && [ "$attempt" -lt "$max" ] || break
		echo "nested: booting a fresh box; the command resumes after its last finished step ($after done)" >&2
	done
	echo "nested: nested box hung $attempt times; giving up — this is an infrastructure failure, not a test result" >&2
	return 124
}

case "${1:-}" in
prepare) prepare; echo "kernel: $KIMG"; echo "initramfs: $INITRD" ;;
run) shift; run "$@"; exit $? ;;
*) die "usage: box.sh prepare | box.sh run CMD [ARGS...]" ;;
esac
