#!/bin/sh
# Concurrent disk requests from a 2-vCPU guest: two writers pinned to the
# two CPUs (taskset) write, sync and checksum files on /data at once, so
# virtio-blk's workers serve overlapping requests through the qcow2 layer
# (a checkpoint first puts a qcow2 overlay over the raw data disk; a second
# one is taken mid-I/O and must drain the requests in flight). Then /data
# unmounts cleanly, e2fsck finds nothing to fix in the disk chain, and after
# a restart every file still matches its checksum.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

sb_create cw --cpus 2 --disk-size 256M --memory 256M
why() {
	"$MVM" logs cw 2>&1 | grep -v '^\[' | tail -25 >&2
	fail "$1"
}
gx() { run_mvm exec cw -- sh -c "$1"; [ "$rc" = 0 ] || why "exec '$1' ($rc): $(cat "$T/err")"; }

gx 'nproc'
expect_eq "guest CPUs" 2 "$(cat "$T/out")"
run_mvm checkpoint cw base
expect_eq "checkpoint before the writers" 0 "$rc"

# Each writer: 48 files of 64-400 KiB (sizes not cluster multiples, so
# partial-cluster copy-on-write too), each followed by its checksum and,
# every 4th, an fsync; done when /tmp/doneN appears.
gx 'for c in 0 1; do mkdir -p /data/w$c; setsid taskset -c $c sh -c "
	for i in \$(seq 48); do
		head -c \$((65536 + (i * 7919 + $c * 104729) % 344064)) /dev/urandom > /data/w$c/f\$i
		sha256sum /data/w$c/f\$i >> /data/w$c/sums
		[ \$((i % 4)) != 0 ] || sync /data/w$c/f\$i
		echo \$i > /tmp/n$c
	done; sync; touch /tmp/done$c" </dev/null >/dev/null 2>&1 &
	echo $! > /tmp/pid$c
done'

# progress: the writers' file counts into $T/out. Not in a command
# substitution: there a failed exec's fail would end only the subshell.
progress() { gx 'cat /tmp/n0 /tmp/n1 2>/dev/null | tr "\n" " "'; }
# Mid-I/O: both writers have started; checkpoint with requests in flight.
for _ in $(seq 100); do
	progress
	set -- $(cat "$T/out")
	[ $# = 2 ] && [ "$1" -ge 4 ] && [ "$2" -ge 4 ] && break
done
[ $# = 2 ] || fail "the writers did not start: '$(cat "$T/out")'"
run_mvm checkpoint cw mid
expect_eq "checkpoint under I/O" 0 "$rc"

# Until both are done: 0 done, 1 still writing. A writer that is gone
# without its done file (2), or an exec that failed (125: the agent, the
# VMM or the guest is gone), ends the wait at once with why (issue 26: a
# wait on a guest that had reset spun until the runner's limit). The
# done file is looked at again after the pid: a writer may finish between.
for _ in $(seq 600); do
	run_mvm exec cw -- sh -c 'r=0; for c in 0 1; do
		test -f /tmp/done$c && continue
		kill -0 "$(cat /tmp/pid$c)" 2>/dev/null || test -f /tmp/done$c ||
			{ echo "writer $c is gone after file $(cat /tmp/n$c)"; exit 2; }
		r=1
	done; exit $r'
	[ "$rc" = 1 ] || break
done
[ "$rc" = 0 ] || why "writers did not finish ($rc): $(cat "$T/out" "$T/err")"
gx 'cat /data/w0/sums /data/w1/sums | wc -l'
expect_eq "files written" 96 "$(cat "$T/out" | tr -d ' ')"
gx 'echo 3 > /proc/sys/vm/drop_caches; sha256sum -c /data/w0/sums /data/w1/sums >/tmp/check 2>&1; echo $?'
expect_eq "checksums after dropping the page cache" 0 "$(cat "$T/out")"
gx 'sync; umount /data && echo unmounted'
expect_eq "umount /data" "unmounted" "$(cat "$T/out")"
run_mvm stop cw
expect_eq "stop" 0 "$rc"

dir="$MVM_STATE_DIR/cw"
read -r file fmt _ < "$dir/disk-top" || fail "no disk-top in $dir"
expect_eq "top layer format" qcow2 "$fmt"
qemu-img check -q -f qcow2 "$dir/$file" || fail "qemu-img check $file"
qemu-img convert -f qcow2 -O raw "$dir/$file" "$T/check.raw" || fail "qemu-img convert"
e2fsck -fn "$T/check.raw" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck: /data not clean"; }
rm -f "$T/check.raw"

run_mvm start cw
expect_eq "restart" 0 "$rc"
gx 'sha256sum -c /data/w0/sums /data/w1/sums >/tmp/check 2>&1; echo $?'
expect_eq "checksums after a restart" 0 "$(cat "$T/out")"
echo "blk-concurrent: ok"
