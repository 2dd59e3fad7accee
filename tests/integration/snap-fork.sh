#!/bin/sh
# mvm snapshot / restore / fork. Tampered snapshots (a flipped byte in the
# state file, a memory file edited in place with its modification time put
# back, a truncated memory file, a swapped disk layer) are refused
# with a clear error and nothing is created. Two sandboxes restored from one
# snapshot both run, diverge, draw different /dev/urandom bytes and have
# clocks within a second of the host's; a fork runs beside its origin; each
# takes its own hostname and MAC address.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

sb_create src --disk-size 64M --memory 256M
why() {
	"$MVM" logs "$1" 2>&1 | grep -v '^\[' | tail -25 >&2
	cp "$MVM_STATE_DIR/$1/console.log" "build/snap-fork-$1-console.log" 2>/dev/null || true
	fail "$2"
}
gx() { n=$1; shift; run_mvm exec "$n" -- sh -c "$1"; [ "$rc" = 0 ] || why "$n" "exec $n '$1' ($rc): $(cat "$T/err")"; }

gx src 'echo from-src > /data/f; echo 41 > /tmp/mem'
run_mvm snapshot src "$T/snap"
expect_eq "snapshot" 0 "$rc"
[ -s "$T/snap/state" ] && [ -f "$T/snap/memory" ] && [ -f "$T/snap/config.json" ] || fail "snapshot files missing: $(ls "$T/snap")"
gx src 'cat /data/f'
expect_eq "source runs on" "from-src" "$(cat "$T/out")"

# Tampering: each refused, nothing created.
refused() { # WHAT REGEX
	run_mvm restore "$T/snap" bad
	[ "$rc" = 125 ] || fail "$1: restore gave $rc"
	expect_match "$1 message" "$2" "$(cat "$T/err")"
	[ ! -e "$MVM_STATE_DIR/bad" ] || fail "$1: a sandbox was created"
}
cp "$T/snap/state" "$T/state.orig"
printf '\377\377' | dd of="$T/snap/state" bs=1 seek=300 conv=notrunc 2>/dev/null
refused "flipped state bytes" "checksum|invalid|bad"
cp "$T/state.orig" "$T/snap/state"
# One byte of memory changed in place, its modification time put back: the
# seal's memory line (its identity) no longer matches, so it is read whole.
touch -r "$T/snap/memory" "$T/mtime.ref"
dd if="$T/snap/memory" of="$T/byte.orig" bs=1 skip=8192 count=1 2>/dev/null
printf 'X' | dd of="$T/snap/memory" bs=1 seek=8192 conv=notrunc 2>/dev/null
touch -r "$T/mtime.ref" "$T/snap/memory"
refused "memory edited in place" "memory.*(checksum|keyed tag)"
dd if="$T/byte.orig" of="$T/snap/memory" bs=1 seek=8192 conv=notrunc 2>/dev/null
mv "$T/snap/memory" "$T/memory.orig"
cp --sparse=always "$T/memory.orig" "$T/snap/memory"
truncate -s -4096 "$T/snap/memory"
refused "truncated memory" "memory.*(bytes|truncated)"
rm "$T/snap/memory"; mv "$T/memory.orig" "$T/snap/memory"
base=$(sed -n 's/.*"disk":[[:space:]]*"\([^"]*\)".*/\1/p' "$T/snap/config.json")
[ -f "$T/snap/$base" ] || fail "no base layer $base in the snapshot"
mv "$T/snap/$base" "$T/base.orig"
cp --sparse=always "$T/base.orig" "$T/snap/$base"
printf 'X' | dd of="$T/snap/$base" bs=1 seek=1048576 conv=notrunc 2>/dev/null
refused "swapped disk layer" "$base.*(checksum|replaced|keyed tag)"
rm -f "$T/snap/$base"; mv "$T/base.orig" "$T/snap/$base"

# Two sandboxes from one snapshot.
SANDBOXES="$SANDBOXES r1 r2 f1"
run_mvm restore "$T/snap" r1
[ "$rc" = 0 ] || why r1 "restore r1: $(cat "$T/err")"
run_mvm restore "$T/snap" r2
[ "$rc" = 0 ] || why r2 "restore r2: $(cat "$T/err")"
for n in r1 r2; do
	gx $n 'cat /data/f /tmp/mem'
	expect_eq "$n state" "from-src
41" "$(cat "$T/out")"
done
gx r1 'echo one > /data/g'
gx r2 'echo two > /data/g'
gx r1 'cat /data/g'; expect_eq "r1 diverges" "one" "$(cat "$T/out")"
gx r2 'cat /data/g'; expect_eq "r2 diverges" "two" "$(cat "$T/out")"
gx r1 'head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n"'; u1=$(cat "$T/out")
gx r2 'head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n"'; u2=$(cat "$T/out")
[ -n "$u1" ] && [ "$u1" != "$u2" ] || fail "restored sandboxes share /dev/urandom output ($u1)"
for n in r1 r2; do
	# Read between two host readings h0 <= h1: a guest clock within 1 s of
	# the host's reads h0-1 .. h1+1 in whole seconds, whatever exec costs.
	h0=$(date +%s); gx $n 'date +%s'; g=$(cat "$T/out"); h1=$(date +%s)
	[ "$g" -ge $((h0 - 1)) ] && [ "$g" -le $((h1 + 1)) ] || fail "$n clock $g, host $h0..$h1"
done

# Fork: origin and copy run side by side.
run_mvm fork src f1
[ "$rc" = 0 ] || why f1 "fork: $(cat "$T/err")"
gx f1 'cat /data/f; echo forked > /data/f'
expect_eq "fork sees the origin's data" "from-src" "$(cat "$T/out")"
gx src 'cat /data/f'
expect_eq "origin unaffected by the fork" "from-src" "$(cat "$T/out")"
# Each restored or forked sandbox is its own machine: its name as hostname,
# its own MAC address (config.json's, on the NIC), unlike its origin's.
gx src 'cat /sys/class/net/eth0/address'; src_mac=$(cat "$T/out")
for n in r1 r2 f1; do
	want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mac"])' \
		"$MVM_STATE_DIR/$n/config.json") || fail "no mac in $n's config.json"
	gx $n 'hostname; cat /sys/class/net/eth0/address'
	expect_eq "$n's hostname and MAC" "$n
$want" "$(cat "$T/out")"
	[ "$want" != "$src_mac" ] || fail "$n shares its origin's MAC $src_mac"
done
run_mvm ls --json
expect_match "all listed" '"f1"' "$(tr -d '\n' < "$T/out")"
echo "snap-fork: ok"
