#!/bin/bash
# make bench-count: the four figures the box's wall clock could not settle
# (docs/benchmarks.md), counted instead of timed. Per unit of work, mvm
# beside its peer in the same run, rounds interleaved:
#   net      per MiB a guest downloads (wget from a test host in a network
#            namespace): mvm (libslirp in the mvm-net helper) beside the
#            build before the helper (MVM_BENCH_BASELINE, libslirp in the VMM)
#   start    per sandbox started: `mvm run --template` (create, first
#            command, removal) beside the same with a cold boot
#   disk     per guest request (fio in the guest, O_DIRECT on a fresh qcow2
#            overlay over a raw base): 4K random write QD1, and 4K write +
#            fdatasync, beside QEMU microvm (tests/bench/microvm.lib)
#   install  per `apt-get install python3 perl` in the guest (the install
#            workload of bench-guest-io) beside QEMU microvm
# Three counts, each a proxy for CPU cost on hardware, never a timing:
#   instr  instructions executed in user space by every process of the side
#          (the CLI, the VMM, the helper; QEMU), valgrind's cachegrind with
#          --trace-children; the seccomp filters only log (MVM_SECCOMP=log),
#          as valgrind makes calls of its own. Also the VMM side alone (the
#          processes in the sandbox's PID namespace; QEMU). The VMM's count
#          is written at its exit, which Landlock forbids: make bench-count
#          boots the box without it
#   sys    system calls made by those processes (strace -f)
#   ctx    their voluntary + involuntary context switches (getrusage of all
#          descendants, reaped through a subreaper: the *_ctxt_switches of
#          /proc/PID/status summed over threads), a run with neither tool
# Per unit = (count with N units - count with the baseline's n0) / (N - n0):
# the boot, the set-up and the teardown cancel out. Each pass is its own boot.
# Env: MVM_COUNT_FIGURES ("net start disk install"), MVM_COUNT_PASSES ("instr
# sys ctx"), MVM_COUNT_ROUNDS (3; MVM_COUNT_INSTALL_ROUNDS, 1, and
# MVM_COUNT_INSTALL_PASSES, "instr sys": an install boot takes minutes in the
# box, and its context switches follow its duration), MVM_COUNT_NET_MB (8),
# MVM_COUNT_IOS (200), MVM_COUNT_VM_SECS (1500, one command's limit),
# MVM_COUNT_RAW (a file the raw lines are appended to as they come; a
# count already in it is kept, not taken again: put it on the checkout's
# share, build/ say, and a run the box restarts resumes),
# MVM_COUNT_FIRST_ROUND (1: the number of the first round, for raw files of
# several runs summed up together),
# MVM_BENCH_BASELINE (the build before the network helper; net is skipped
# without it), MVM_BENCH_APT_REPO (install is skipped without it),
# MVM_IMAGE_DIR. `count.sh --summary RAW...` prints the table from raw files
# (rounds of several runs combine: a count does not depend on the clock).
set -eu
SELF=$(readlink -f "$0")
LIMIT=${MVM_COUNT_VM_SECS:-1500}

# ---------------------------------------------------------------- summary --
summary() {
	awk '
	# "# FIG instr SIDE ROUND TAG: [ROLE] CMD... N": one process of a count.
	# The VMM side (role vmm; in raw files without roles, the first mvm
	# process listed, vg.1: the VMM in its PID namespace, and mvm-net) becomes
	# a row of its own, "instr-vmm".
	$1 == "#" && $3 == "instr" {
		key = $2 " instr-vmm " $4 " " $5 " " substr($6, 1, length($6) - 1)
		if ($7 == "vmm" || $7 == "cli") isvmm = $7 == "vmm"
		else isvmm = !(key in vmm) || $7 ~ /mvm-net$/ || $7 ~ /^qemu/
		if (isvmm) vmm[key] += $NF; else if (!(key in vmm)) vmm[key] += 0
		# disk: one baseline boot serves both jobs (round_disk)
		if ($2 == "disk-randwrite" && $6 ~ /^base:/) {
			k2 = "disk-fsync" substr(key, length("disk-randwrite") + 1)
			if (isvmm) vmm[k2] += $NF; else if (!(k2 in vmm)) vmm[k2] += 0
		}
		next
	}
	# FIG PASS SIDE ROUND TAG VALUE  (TAG: units:N), "-" when a run failed
	$1 !~ /^#/ && NF == 6 {
		if ($2 == "instr" && $6 == "-") failed[$1 " instr-vmm " $3 " " $4 " " $5] = 1
		k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
		split($5, u, ":"); n = u[2] + 0
		if ($6 == "-") { bad[k] = 1; next }
		if (u[1] == "units") { hi[k] = n; hv[k] = $6 } else { lo[k] = n; lv[k] = $6 }
		if (!((k) in seen)) { seen[k] = 1 }
		fig[$1] = 1; pass[$2] = 1; side[$1, $3] = 1; round[$1, $2, $3, $4] = 1
	}
	function add(k6,   f) {
		split(k6, f, " ")
		k = f[1] SUBSEP f[2] SUBSEP f[3] SUBSEP f[4]
		split(f[5], u, ":"); n = u[2] + 0
		if (f[6] == "-") { bad[k] = 1; return }
		if (u[1] == "units") { hi[k] = n; hv[k] = f[6] } else { lo[k] = n; lv[k] = f[6] }
		fig[f[1]] = 1; round[f[1], f[2], f[3], f[4]] = 1
	}
	function per(k) { return ((k) in bad) || !((k) in hv) ? "" : \
		((k) in lv ? (hv[k] - lv[k]) / (hi[k] - lo[k]) : hv[k] / hi[k]) }
	function sort(a, m,   i, j, t) { for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
		if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } }
	function fmt(v) { return v >= 1e6 ? sprintf("%.2fM", v / 1e6) : v >= 1e4 ? sprintf("%.1fk", v / 1e3) : sprintf("%.1f", v) }
	END {
		for (key in vmm) add(key " " ((key in failed) ? "-" : vmm[key]))
		nf = split("net start start-cli disk-randwrite disk-fsync install", F, " ")
		np = split("instr-vmm instr sys ctx", P, " ")
		unit["net"] = "per MiB downloaded"; unit["start"] = "per sandbox started (mvm run)"
		unit["start-cli"] = "per sandbox started (create, exec, rm: runs before 2026-12-06 02:00)"
		unit["disk-randwrite"] = "per 4K random write, QD1"; unit["disk-fsync"] = "per 4K write + fdatasync"
		unit["install"] = "per install"
		what["instr-vmm"] = "instr., VMM side"; what["instr"] = "instr., all"; what["sys"] = "system calls"; what["ctx"] = "context switches"
		pair["net"] = "mvm before"; pair["start"] = pair["start-cli"] = "template cold"
		pair["disk-randwrite"] = pair["disk-fsync"] = pair["install"] = "mvm qemu"
		print "Counts, not timings: each a proxy for CPU cost on hardware (instructions in user"
		print "space, valgrind; system calls, strace -f; context switches, getrusage). Per unit:"
		print "(count with N units - count with the baseline) / (N - baseline units)."
		for (i = 1; i <= nf; i++) {
			f = F[i]; if (!(f in fig)) continue
			split(pair[f], S, " ")
			printf "\n%s, %s: %s beside %s\n", f, unit[f], S[1], S[2]
			printf "  %-17s %12s %12s %7s   %s\n", "count (median)", S[1], S[2], "ratio", "per round " S[1] " | " S[2] "; ratios"
			for (j = 1; j <= np; j++) {
				p = P[j]; line = ""
				for (s = 1; s <= 2; s++) {
					m[s] = 0; rr[s] = ""
					for (r = 1; r <= 20; r++) {
						if (!((f SUBSEP p SUBSEP S[s] SUBSEP r) in round)) continue
						v = per(f SUBSEP p SUBSEP S[s] SUBSEP r)
						rr[s] = rr[s] (rr[s] == "" ? "" : "/") (v == "" ? "-" : fmt(v))
						if (v != "") { a[s, ++m[s]] = v; val[s, r] = v }
					}
					for (q = 1; q <= m[s]; q++) t[q] = a[s, q]
					sort(t, m[s])
					med[s] = m[s] == 0 ? "" : m[s] % 2 ? t[(m[s] + 1) / 2] : (t[m[s] / 2] + t[m[s] / 2 + 1]) / 2
					lo_[s] = m[s] ? t[1] : ""; hi_[s] = m[s] ? t[m[s]] : ""
				}
				if (rr[1] == "" && rr[2] == "") continue
				rat = ""
				for (r = 1; r <= 20; r++) if (((1 SUBSEP r) in val) && ((2 SUBSEP r) in val) && val[2, r] > 0)
					rat = rat (rat == "" ? "" : "/") sprintf("%.2f", val[1, r] / val[2, r])
				printf "  %-17s %12s %12s %7s   %s | %s; %s\n", what[p],
					(med[1] == "" ? "-" : fmt(med[1])), (med[2] == "" ? "-" : fmt(med[2])),
					(med[1] != "" && med[2] > 0 ? sprintf("%.2fx", med[1] / med[2]) : "-"),
					rr[1], rr[2], (rat == "" ? "-" : rat)
				delete val
			}
		}
	}' "$@"
}
[ "${1:-}" = --summary ] && { shift; summary "$@"; exit 0; }

# ------------------------------------------------------------------ units --
# One unit of work, run by this script again (--unit) so that strace -f and
# the subreaper see exactly it; COUNT_WRAP (valgrind's words, instr pass
# only) goes before each VMM command. The guest prints count-ok when the
# work was done; the caller checks for it in $COUNT_OUT.
wrap() { # shellcheck disable=SC2086
	timeout "$LIMIT" ${COUNT_WRAP:-} "$@"; }

unit_net() {	# BIN FILE
	wrap "$1" run --allow 203.0.113.10:8080/tcp -- sh -c \
		"wget -q -O /dev/null http://203.0.113.10:8080/$2 && echo count-ok"
}

unit_start() {	# template|cold
	# `mvm run`: create, first exec and rm in one process. Not create, exec
	# and rm apart: a sandbox's VMM under valgrind has valgrind's command
	# line, so the CLI's check that a pid is the VMM (is_our_vmm) says no.
	if [ "$1" = template ]; then
		wrap "$MVM" run --template tpl -- sh -c 'echo count-ok'
	else
		wrap "$MVM" run --net none --memory 256M --disk-size 64M -- sh -c 'echo count-ok'
	fi
}

# The guest reads its workload's parameters from its kernel command line
# (count.a, count.b): one initramfs serves every boot of QEMU.
unit_guest() {	# SIDE WORKLOAD A B
	local args="count.a=$3 count.b=$4"
	if [ "$1" = mvm ]; then
		wrap "$MVM" run --memory 256M --cmdline "$args" --disk "$T/ov.qcow2:qcow2" \
			--disk "$T/tools.ext4:ro" -- sh -c "$(guest_cmd "$2")"
	else
		QM_WRAP=${COUNT_WRAP:-} QM_APPEND=$args qemu_microvm "$LIMIT" "$T/q.out" "$T/q-$2.cpio" \
			-drive "file=$T/ov.qcow2,format=qcow2,if=none,id=d0,cache=writeback,aio=threads" \
			-device virtio-blk-device,drive=d0 \
			-drive "file=$T/tools.ext4,format=raw,if=none,id=d1,readonly=on" \
			-device virtio-blk-device,drive=d1
		cat "$T/q.out"
	fi
}

# guest_cmd WORKLOAD: the guest command that runs tools/count_guest.sh (disk)
# or tools/apt_install.sh (install) from the tools disk on the big disk.
guest_cmd() {
	local run
	case $1 in
	disk) run='sh /t/count_guest.sh /t /dev/$t $a $b' ;;
	install) run='if [ "$a" = 0 ]; then sh /t/apt_install.sh /t /dev/$t skip; else sh /t/apt_install.sh /t /dev/$t; fi' ;;
	esac
	printf '%s\n' "for d in vda vdb; do if [ \$(cat /sys/block/\$d/size) -gt 1000000 ]; then t=\$d; else l=\$d; fi; done
a=\$(sed -n 's/.*count\.a=\([0-9]*\).*/\1/p' /proc/cmdline); b=\$(sed -n 's/.*count\.b=\([0-9]*\).*/\1/p' /proc/cmdline)
mkdir -p /t && mount -o ro /dev/\$l /t && $run && echo count-ok"
}

if [ "${1:-}" = --unit ]; then
	shift
	. tests/bench/microvm.lib
	fig=$1; shift
	"unit_$fig" "$@" > "$COUNT_OUT" 2>&1 || true
	exit 0
fi

# ------------------------------------------------------------- measuring --
# The kind of a process, for the counts: the harness's own shells and
# timeouts are left out of instr and sys.
harness_cmd='^(/bin/|/usr/bin/)?(sh|bash|dash|timeout|cat|sed|readlink)( |$)'

# instr_of DIR: the sum of cachegrind's "I refs" over the side's processes;
# "-" if one of them ended without its summary (killed before its exit).
# Each process is also listed in DIR/parts with its role: "vmm" for QEMU and
# for the processes in the sandbox's PID namespace (the VMM, its network
# helper: valgrind's "Parent PID" is 0 or 1 there), else "cli" (mvm's CLI
# and the processes outside the namespace that wait for the VMM).
instr_of() {
	local f cmd n ppid role sum=0 miss=0
	for f in "$1"/vg.*; do
		[ -e "$f" ] || continue
		cmd=$(sed -n 's/^==[0-9]*== Command: //p' "$f" | head -1)
		[[ $cmd =~ $harness_cmd ]] && continue
		n=$(sed -n 's/^==[0-9]*== I *refs: *//p' "$f" | tr -d ,)
		if [ -z "$n" ] || [ "$n" = 0 ]; then
			echo "bench-count: no count from $cmd ($f): killed before its exit?" >&2
			miss=1; continue
		fi
		ppid=$(sed -n 's/^==[0-9]*== Parent PID: *//p' "$f" | head -1)
		role=cli
		case "$cmd" in qemu-system-*) role=vmm ;; esac
		[ "${ppid:-x}" = 0 ] || [ "${ppid:-x}" = 1 ] && role=vmm
		sum=$((sum + n))
		printf '%s %s %s\n' "$role" "${cmd%% -*}" "$n" >> "$1/parts"
	done
	[ "$miss" = 0 ] && [ "$sum" -gt 0 ] && echo "$sum" || echo -
}

# sys_of TRACE: system calls by processes that are not the harness's, from
# strace -f's lines ("PID name(" once per call, "<... name resumed>" does
# not count again). Two passes: a process's kind is what it last exec'd,
# else its parent's (a thread's or a forked child's first calls may come
# before the clone that made it returns in the trace).
sys_of() {
	awk -v re="$harness_cmd" '
	NR == FNR {
		if (/(clone|clone3|fork|vfork)(\(| resumed>)/ && / = [0-9]+$/) parent[$NF] = $1
		if (/ execve\("/ && !/ = -1 /) { split($0, q, "\""); c = q[2]; sub(/.*\//, "", c); ex[$1] = c }
		next
	}
	function kind(p,   i) {
		for (i = 0; i < 64 && !(p in ex); i++) { if (!(p in parent)) return "harness"; p = parent[p] }
		return (p in ex) ? ex[p] : "harness"
	}
	$2 ~ /^[a-z_0-9]+\(/ {
		if (!($1 in memo)) memo[$1] = kind($1)
		if (memo[$1] !~ /^(sh|bash|dash|timeout|cat|sed|readlink|harness)$/) n++
	}
	END { print n + 0 }' "$1" "$1"
}

# measure PASS FIG SIDE ROUND TAG UNIT-ARGS...: one raw line.
measure() {
	local pass=$1 fig=$2 side=$3 round=$4 tag=$5 d v
	shift 5
	# Resumable: the box restarts a command from its start when it freezes
	# (tests/nested/box.sh; three freezes ended the run of 2026-12-07). A
	# count already in a raw file that outlives the box (MVM_COUNT_RAW on
	# the checkout's share) is not taken again, and each count taken is a
	# step of the box's progress file, so a frozen box resumes after it.
	if [ -n "${MVM_COUNT_RAW:-}" ] && grep -q "^$fig $pass $side $round $tag [0-9]" "$RAW"; then
		echo "bench-count: $fig $pass $side round $round ($tag): in $RAW already, kept" >&2
		return 0
	fi
	d=$T/m/$fig.$side.$round.$tag.$pass
	mkdir -p "$d"
	export COUNT_OUT=$d/out
	case $pass in
	instr)
		COUNT_WRAP="valgrind --tool=cachegrind --cache-sim=no --trace-children=yes --log-file=$d/vg.%p --cachegrind-out-file=/dev/null" \
			MVM_SECCOMP=log "$SELF" --unit "$@" ;;
	sys) strace -f -qq -o "$d/trace" "$SELF" --unit "$@" ;;
	ctx) python3 -c '
import ctypes, os, resource, signal, subprocess, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)	# PR_SET_CHILD_SUBREAPER: the daemons come back to us
signal.alarm(int(os.environ["LIMIT"]) + 60)	# a lingering process: no figure, not a hang
subprocess.call(sys.argv[1:])
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_nvcsw + r.ru_nivcsw)' "$SELF" --unit "$@" > "$d/ctx" || echo - > "$d/ctx" ;;
	esac
	if ! grep -q count-ok "$d/out"; then
		echo "bench-count: $fig $side round $round ($tag, $pass) failed, left out:" >&2
		tail -15 "$d/out" >&2
		# What valgrind said of a process it could not follow.
		[ "$pass" != instr ] || grep -h -m 5 -E 'valgrind:|Process terminating|unhandled|WARNING' \
			"$d"/vg.* 2>/dev/null | head -20 >&2
		v=-
	else
		case $pass in
		instr) v=$(instr_of "$d") ;;
		sys) v=$(sys_of "$d/trace") ;;
		ctx) v=$(cat "$d/ctx") ;;
		esac
	fi
	echo "$fig $pass $side $round $tag $v" | tee -a "$RAW"
	[ ! -s "$d/parts" ] || sed "s/^/# $fig $pass $side $round $tag: /" "$d/parts" >> "$RAW"
	[ -z "${MVM_TEST_PROGRESS:-}" ] || echo "count $fig $pass $side $round $tag" >> "$MVM_TEST_PROGRESS"
	rm -rf "$d"
}

# --------------------------------------------------------------- figures --
# setup_FIG once, then round_FIG N for each round: rounds go across the
# figures (round 1 of each, then round 2 ...), so a run cut short still has
# every figure.
setup_net() {
	NET_UP=1
	testhost_up
	echo ready > "$T/www/ready"
	head -c $((NET_MB << 20)) /dev/urandom > "$T/www/big"
	: > "$T/www/empty"
	ip netns exec "$NS" busybox httpd -f -p 8080 -h "$T/www" &
	HPID=$!
	local i=0
	until busybox wget -q -O /dev/null http://203.0.113.10:8080/ready 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 100 ] || { echo "bench-count: http server did not start" >&2; exit 1; }
		sleep 0.2
	done
}

round_net() {
	local p s b
	for p in $PASSES; do
		for s in mvm before; do
			b=$MVM; [ $s = mvm ] || b=$BASE
			measure "$p" net $s "$1" "units:$NET_MB" net "$b" big
			measure "$p" net $s "$1" base:0 net "$b" empty
		done
	done
}

setup_start() {
	export MVM_TEMPLATE_DIR=$T/templates
	"$MVM" create countsrc --net none --memory 256M --disk-size 64M >/dev/null
	"$MVM" exec countsrc -- true
	"$MVM" template create tpl --from countsrc >/dev/null
	"$MVM" rm -f countsrc >/dev/null
}

round_start() {
	local p s
	for p in $PASSES; do
		for s in template cold; do measure "$p" start $s "$1" units:1 start $s; done
	done
}

# The tools disk (fio and its libraries, the guest scripts, the apt
# repository) and the initramfs QEMU boots for each workload.
setup_guest() {
	local lib w
	[ -e "$T/tools.ext4" ] && return 0
	mkdir -p "$T/tools/bin" "$T/tools/lib"
	cp "$(command -v fio)" "$T/tools/bin/fio"
	cp tests/bench/count_guest.sh tests/bench/apt_install.sh "$T/tools/"
	ldd "$(command -v fio)" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do cp -L "$lib" "$T/tools/lib/"; done
	case " $FIGS " in *" install "*) cp -r "$MVM_BENCH_APT_REPO" "$T/tools/repo"
		cp --sparse=always "$IMAGE" "$T/debian.raw" ;;
	esac
	mkfs.ext4 -q -d "$T/tools" -L mvmcount "$T/tools.ext4" $(( $(du -sm "$T/tools" | cut -f1) + 32 ))M
	case " $FIGS " in *" disk "*) head -c $((528 << 20)) /dev/urandom > "$T/base.raw" ;; esac
	for w in disk install; do
		case " $FIGS " in *" $w "*) "$MVM" run --save-initrd "$T/q-$w.cpio" -- sh -c "$(guest_cmd "$w")" \
			>/dev/null 2>&1 || true ;; esac
	done
}
setup_disk() { setup_guest; }
setup_install() { setup_guest; }

# A fresh overlay for every boot: the writes allocate, as bench-guest-io's do.
guest_measure() {	# PASS FIG SIDE ROUND TAG BASE WORKLOAD A B
	rm -f "$T/ov.qcow2"
	qemu-img create -q -f qcow2 -o cluster_size=65536 -b "$T/$6" -F raw "$T/ov.qcow2"
	measure "$1" "$2" "$3" "$4" "$5" guest "$3" "$7" "$8" "$9"
}

round_disk() {
	local p s b
	for p in $PASSES; do
		for s in mvm qemu; do
			guest_measure "$p" disk-randwrite $s "$1" "units:$IOS" base.raw disk "$IOS" 1
			guest_measure "$p" disk-fsync $s "$1" "units:$IOS" base.raw disk 1 "$IOS"
			# One baseline boot serves both jobs (1 request each).
			guest_measure "$p" disk-randwrite $s "$1" base:1 base.raw disk 1 1
			b=$(grep "^disk-randwrite $p $s $1 base:1 " "$RAW" | tail -1)
			echo "disk-fsync${b#disk-randwrite}" >> "$RAW"
		done
	done
}

round_install() {
	local p s
	[ $(($1 - FIRST)) -lt "$INSTALL_ROUNDS" ] || return 0
	for p in $INSTALL_PASSES; do
		for s in mvm qemu; do
			guest_measure "$p" install $s "$1" units:1 debian.raw install 1 0
			guest_measure "$p" install $s "$1" base:0 debian.raw install 0 0
		done
	done
}

MVM=$(readlink -f "${MVM:-build/mvm}")
GUEST=${MVM_GUEST_DIR:-$(dirname "$MVM")/guest}
ROUNDS=${MVM_COUNT_ROUNDS:-3}
# The first round's number: runs whose raw files are summed up together.
FIRST=${MVM_COUNT_FIRST_ROUND:-1}
INSTALL_ROUNDS=${MVM_COUNT_INSTALL_ROUNDS:-1}
INSTALL_PASSES=${MVM_COUNT_INSTALL_PASSES:-instr sys}
FIGS=${MVM_COUNT_FIGURES:-net start disk install}
PASSES=${MVM_COUNT_PASSES:-instr sys ctx}
NET_MB=${MVM_COUNT_NET_MB:-8}
IOS=${MVM_COUNT_IOS:-200}
BASE=${MVM_BENCH_BASELINE:+$(readlink -f "$MVM_BENCH_BASELINE")}
IMAGE=${MVM_IMAGE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mvm/images}/debian.ext4
# Under valgrind a VMM, its helper and their guests are slow to answer.
export MVM_START_TIMEOUT=$LIMIT MVM_AGENT_TIMEOUT=$LIMIT MVM_NET_HELPER_TIMEOUT=600
[ "$(id -u)" = 0 ] || { echo "bench-count: needs root (run through tests/nested/maybe-nested.sh)" >&2; exit 2; }
for c in valgrind strace python3; do
	command -v $c >/dev/null || { echo "bench-count: $c missing (make deps)" >&2; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-bench-count.XXXXXX")
export T MVM GUEST LIMIT
RAW=${MVM_COUNT_RAW:-$T/raw}
touch "$RAW"
NS=mvmc$$ VH=mch$$ VT=mct$$
HPID=""
cleanup() {
	set +e
	[ -z "$HPID" ] || kill "$HPID" 2>/dev/null
	[ -z "${NET_UP:-}" ] || testhost_down
	rm -rf "$T"
}
trap cleanup EXIT
. tests/bench/microvm.lib
. tests/bench/testhost.lib

figs=""
for f in $FIGS; do
	case $f in
	net) [ -n "$BASE" ] || { echo "bench-count: net skipped: MVM_BENCH_BASELINE (the build before the network helper) unset" >&2; continue; } ;;
	install) [ -f "${MVM_BENCH_APT_REPO:-}/Packages" ] || { echo "bench-count: install skipped: MVM_BENCH_APT_REPO is not a repository" >&2; continue; } ;;
	start | disk) ;;
	*) echo "bench-count: unknown figure $f" >&2; exit 2 ;;
	esac
	figs="$figs $f"
done
FIGS=$figs
for f in $FIGS; do "setup_$f"; done
for r in $(seq "$FIRST" $((FIRST + ROUNDS - 1))); do
	for f in $FIGS; do "round_$f" "$r"; done
	echo "bench-count: round $r done" >&2
done
echo
summary "$RAW"
