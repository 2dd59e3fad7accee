#!/bin/sh
# The event loop never waits for the disk (issue 21), checked by structure,
# not by timing (issue 26): the test-hooks mvm counts every disk system call
# it makes (pread, pwrite, preadv, pwritev, fsync, fdatasync, fallocate,
# sync_file_range on a disk image's descriptor) per kind of thread
# (common/io_census.h), and its control API's status reply carries the
# counts ("test_disk_io"). While the guest writes 1 GiB to /data with an
# fsync every 64 MiB, an HTTP download from a test host completes and an
# `mvm exec` answers: the event loop issued no disk call at all, and the
# blk workers wrote the whole GiB.
#
# It proves it can fail first: the same sandbox with MVM_TEST_BLK_SYNC=1
# (requests served on the event loop, the design before issue 21) shows
# the event loop's disk calls in the same counts, and none by a worker.
#
# "While" holds by construction, not by speed: the writer keeps writing
# (past 1 GiB if need be) until a download has completed and an exec has
# answered during its run. No clock is read here, and nothing is polled: the
# test waits on the writer's exec itself, so a writer, agent, VMM or guest
# that is gone fails the test at once; the runner's time limit is the hang
# guard for a guest that lives but makes no progress.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
. tests/integration/net.lib
trap 'for n in $SANDBOXES; do "$MVM" rm -f "$n" >/dev/null 2>&1; done; net_cleanup' EXIT

MVM=build/testhooks/mvm
export MVM_GUEST_DIR="$PWD/build/guest"	# the test build has no guest beside it
[ -x "$MVM" ] || fail "$MVM missing (make testhooks)"
command -v objdump >/dev/null || fail "objdump missing (binutils: make deps)"
GIB=1073741824

# The census sees every call only if no call site bypasses the linker's
# --wrap (Makefile, CENSUS_WRAP): every call of a wrapped function's PLT
# entry, the fortified __pread_chk/__pread64_chk of the hardened build
# included, is inside its __wrap_ function.
bypass=$(objdump -d --no-show-raw-insn "$MVM" | awk '
	/^[0-9a-f]+ <.*>:$/ { fn = $2 }
	/call.*<(pread|pwrite|preadv|pwritev|fsync|fdatasync|fallocate|sync_file_range)(64|v2|64v2)?@plt>/ &&
		fn !~ /^<__wrap_/ { print fn, $NF }
	/call.*<__(pread|pread64)_chk@plt>/ && fn !~ /^<__wrap___/ { print fn, $NF }' | sort -u)
[ -z "$bypass" ] || fail "disk calls outside the census wrappers: $bypass"

why() {	# the guest kernel's lines too: how a guest that reset got there
	"$MVM" logs nb 2>&1 | tail -40 >&2
	fail "$1"
}
gx() { run_mvm exec nb -- sh -c "$1"; [ "$rc" = 0 ] || why "exec '$1' ($rc): $(cat "$T/err")"; }

# census: "KIND CALLS READ WRITTEN" per thread kind, from the status reply.
census() {
	python3 - "$MVM_STATE_DIR/nb/api.sock" <<'PY' > "$T/census" || why "status: no test_disk_io (not a test-hooks build?)"
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"op":"status"}\n')
buf = b""
while not buf.endswith(b"\n"):
    d = s.recv(65536)
    if not d:
        break
    buf += d
for kind, c in json.loads(buf)["test_disk_io"].items():
    print(kind, c["calls"], c["read"], c["written"])
PY
}
# count KIND FIELD (calls, read, written) from the last census.
count() {
	awk -v k="$1" -v f="$2" '$1 == k { print f == "calls" ? $2 : f == "read" ? $3 : $4 }' "$T/census"
}

head -c 4194304 /dev/urandom > "$T/www/big.bin"

# The control: requests served on the event loop. 16 MiB, fsync'd.
export MVM_TEST_BLK_SYNC=1
sb_create nb --disk-size 1200M --memory 384M $NET_DNS --allow 203.0.113.10:8080/tcp
unset MVM_TEST_BLK_SYNC
census
loop0=$(count event_loop calls)
gx 'dd if=/dev/zero of=/data/c bs=1M count=16 conv=fsync 2>/dev/null && rm /data/c && sync && echo written'
census
echo "blk-nonblocking: control (MVM_TEST_BLK_SYNC=1): $(tr '\n' ';' < "$T/census")" >&2
[ "$(count event_loop calls)" -gt "$loop0" ] ||
	fail "the control's event loop issued no disk call: the census cannot see a loop that waits for the disk"
expect_eq "the control's workers issued no disk call" 0 "$(count blk_worker calls)"

# The real thing: the same sandbox restarted with its I/O threads.
run_mvm stop nb
expect_eq "stop the control" 0 "$rc"
run_mvm start nb
expect_eq "start with I/O threads" 0 "$rc"

# Downloads in a loop, in their own session, until the writer is done; one
# counts only if it completed while the writer still ran. Its pid in
# /tmp/dlpid: a writer that outlives it fails instead of writing forever.
gx 'rm -f /tmp/net /tmp/execd /tmp/wstarted /tmp/wdone
setsid sh -c "while [ ! -f /tmp/wdone ]; do
	timeout 120 wget -q -O /dev/null http://203.0.113.10:8080/big.bin && { [ -f /tmp/wdone ] || echo ok >> /tmp/net; }
done" </dev/null >/dev/null 2>&1 &
echo $! > /tmp/dlpid; echo started'
# The writer: 64 MiB chunks, fsync'd, over a 1 GiB file (the data disk is
# raw: zeroes are written like any other data), 16 chunks at least and on
# until a download and an exec have completed during its run; 48 at most
# (3 GiB), a bound in work, not time, for a network that never answers.
# Its first line, "writing", says it runs; it comes through a FIFO the test
# reads, so the test waits on the writer itself: the read returns with that
# line, or at end of file as soon as the writer's exec has ended for any
# reason (the command failed, the agent or the VMM went, the guest reset).
# Nothing is polled (issue 26: CI once saw this wait spin for the runner's
# whole 600 s limit).
mkfifo "$T/w.fifo"
"$MVM" exec nb -- sh -c 'touch /tmp/wstarted; echo writing; i=0
	while [ $i -lt 16 ] || [ ! -s /tmp/net ] || [ ! -f /tmp/execd ]; do
		[ $i -lt 48 ] || { echo "no download and exec after $i chunks: net=$(cat /tmp/net 2>/dev/null | wc -l)"; exit 1; }
		kill -0 "$(cat /tmp/dlpid)" || { echo "the download loop died after $i chunks"; exit 1; }
		dd if=/dev/zero of=/data/big bs=1M count=64 seek=$((i % 16 * 64)) conv=notrunc,fsync 2>/tmp/dd.err ||
			{ cat /tmp/dd.err; exit 1; }
		i=$((i + 1))
	done
	touch /tmp/wdone; echo "chunks=$i"' > "$T/w.fifo" 2> "$T/w.err" &
wpid=$!
step "the writer's exec: waiting for its first line"
exec 3< "$T/w.fifo"
first=""
read -r first <&3 || true
cat <&3 > "$T/w.out" &	# the rest, so the writer never blocks on its output
catpid=$!
exec 3<&-
# writer_wait: the writer's exec has ended (or ends now): its status in wrc.
writer_wait() {
	wrc=0
	wait "$wpid" || wrc=$?
	wait "$catpid" || true
}
# writer_ended WHAT: say how the writer's exec ended, and how the sandbox is.
writer_ended() {
	why "$1 (exec status $wrc): $(cat "$T/w.out" "$T/w.err" | tail -5)
  sandbox nb: $("$MVM" ls 2>&1 | grep '^nb ' || echo 'not listed')"
}
if [ "$first" != writing ]; then
	writer_wait
	writer_ended "the writer's exec ended before it began writing"
fi
# An exec while the writer runs: it marks its answer only then.
run_mvm exec nb -- sh -c 'test -f /tmp/wstarted && touch /tmp/execd'
[ "$rc" = 0 ] || why "no exec answered while the writer ran ($rc): $(cat "$T/err")"
step "waiting for the writer's exec to end"
writer_wait
[ "$wrc" = 0 ] || writer_ended "the writer failed"

census
echo "blk-nonblocking: $(cat "$T/w.out"); census: $(tr '\n' ';' < "$T/census")" >&2
expect_eq "disk calls by the event loop during the 1 GiB write" 0 "$(count event_loop calls)"
[ "$(count blk_worker calls)" -gt 0 ] || fail "no disk call by a blk worker: the census saw nothing"
[ "$(count blk_worker written)" -ge "$GIB" ] ||
	fail "the workers wrote $(count blk_worker written) bytes, less than the 1 GiB the guest wrote"
gx 'wc -l < /tmp/net'
[ "$(tr -d ' ' < "$T/out")" -ge 1 ] || fail "no download completed while the disk was busy"
gx 'stat -c %s /data/big'
expect_eq "1 GiB written" "$GIB" "$(cat "$T/out")"
echo "blk-nonblocking: ok"
