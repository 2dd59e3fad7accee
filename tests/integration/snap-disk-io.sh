#!/bin/sh
# A snapshot taken while the guest runs heavy disk I/O (writers creating,
# syncing and deleting files on /data) restores to a consistent file system:
# the restored guest's writers carry on, then stop, /data is unmounted
# cleanly, and e2fsck finds nothing to fix — in the restored sandbox's disk
# chain and in the snapshot's own disk as a crash image (journal replayed).
. tests/integration/lib.sh
. tests/integration/sandbox.lib

sb_create io --disk-size 128M --memory 256M
why() {
	"$MVM" logs "$1" 2>&1 | grep -v '^\[' | tail -25 >&2
	fail "$2"
}
gx() { n=$1; shift; run_mvm exec "$n" -- sh -c "$1"; [ "$rc" = 0 ] || why "$n" "exec $n '$1' ($rc): $(cat "$T/err")"; }

# Three writers in their own sessions: whole files, appends, renames and
# deletes, each round synced, the round number in /tmp/nI.
gx io 'mkdir -p /data/w; for i in 1 2 3; do
	setsid sh -c "n=0; while :; do
		head -c \$((40000 * $i)) /dev/urandom > /data/w/$i.\$n
		echo \$n >> /data/w/log$i
		mv /data/w/$i.\$n /data/w/$i.r\$n
		rm -f /data/w/$i.r\$((n - 3))
		sync; n=\$((n + 1)); echo \$n > /tmp/n$i
	done" </dev/null >/dev/null 2>&1 &
	echo $! >> /tmp/writers
done'
# rounds NAME: the writers' rounds into $T/out. Not in a command
# substitution: there a failed exec's fail would end only the subshell,
# and a guest that is gone would be asked 60 times over (issue 26).
rounds() { gx "$1" 'cat /tmp/n1 /tmp/n2 /tmp/n3 2>/dev/null | tr "\n" " "'; }
# slowest WRITER_ROUNDS...: the lowest round, or -1 unless all three report.
slowest() { [ $# = 3 ] || { echo -1; return; }; printf '%s\n' "$@" | sort -n | head -1; }
wait_rounds() { # NAME MIN: until each writer is past MIN (bounded)
	for _ in $(seq 60); do
		rounds "$1"
		[ "$(slowest $(cat "$T/out"))" -gt "$2" ] && return 0
	done
	fail "$1: the writers did not get past round $2: $(cat "$T/out")"
}
# The I/O is under way before the snapshot: every writer finished a round.
wait_rounds io 1

run_mvm snapshot io "$T/snap"
[ "$rc" = 0 ] || why io "snapshot under I/O ($rc): $(cat "$T/err")"
SANDBOXES="$SANDBOXES r"
run_mvm restore "$T/snap" r
[ "$rc" = 0 ] || why r "restore ($rc): $(cat "$T/err")"
rounds r
low=$(slowest $(cat "$T/out"))
[ "$low" -ge 0 ] || fail "restored guest lost its writers' state: '$(cat "$T/out")'"
# The restored writers go on writing to the restored disk ...
wait_rounds r $((low + 2))
# ... then stop; /data must unmount cleanly.
# (Each writer leads its own process group: the group goes, its head too.)
gx r 'for p in $(cat /tmp/writers); do kill -9 -$p; n=0; while kill -0 -$p 2>/dev/null && [ $n -lt 100000 ]; do n=$((n + 1)); done; done; sync; umount /data && echo unmounted'
expect_eq "umount /data" "unmounted" "$(cat "$T/out")"
run_mvm stop r
expect_eq "stop r" 0 "$rc"

# fsck_chain DIR WHAT [FILE FORMAT]: the disk chain of DIR as one raw image, checked.
fsck_chain() {
	dir=$1 what=$2 file=${3:-} fmt=${4:-}
	if [ -z "$file" ] && [ -f "$dir/disk-top" ]; then read -r file fmt _ < "$dir/disk-top"; fi
	[ -n "$file" ] || fail "$what: no disk file in $dir ($(ls "$dir"))"
	rm -f "$T/check.raw"
	qemu-img convert -f "$fmt" -O raw "$dir/$file" "$T/check.raw" || fail "$what: qemu-img convert $file"
	# A crash image may need its journal replayed, and nothing else: replay
	# only (exit 1 = replayed), then a read-only full check finds nothing.
	r1=0; e2fsck -y -E journal_only "$T/check.raw" >"$T/fsck1" 2>&1 || r1=$?
	[ "$r1" -le 1 ] || { cat "$T/fsck1" >&2; fail "$what: journal replay: e2fsck exit $r1"; }
	e2fsck -fn "$T/check.raw" >"$T/fsck2" 2>&1 || { cat "$T/fsck1" "$T/fsck2" >&2; fail "$what: not clean after journal replay"; }
}

# The restored sandbox was unmounted cleanly: nothing to replay, nothing to fix.
fsck_chain "$MVM_STATE_DIR/r" "restored sandbox"
[ "$r1" = 0 ] || { cat "$T/fsck1" >&2; fail "restored sandbox: /data was unmounted, yet its journal needed replaying"; }

# The snapshot's own disk, exactly as taken mid-I/O: crash-consistent. Its
# top layer is the one no other layer names as its backing file.
layers=$(cd "$T/snap" && ls | grep -vxE 'state|memory|config\.json|seal')
backs=""
for f in $layers; do
	b=$(qemu-img info -U --output=json "$T/snap/$f" | sed -n 's/.*"backing-filename":[[:space:]]*"\([^"]*\)".*/\1/p')
	backs="$backs $(basename "${b:-/}")"
done
top="" topfmt=""
for f in $layers; do
	case " $backs " in *" $f "*) continue ;; esac
	[ -z "$top" ] || fail "snapshot has two top layers: $top and $f"
	top=$f
done
[ -n "$top" ] || fail "no disk layer in the snapshot: $(ls "$T/snap")"
[ "$(head -c 3 "$T/snap/$top")" = QFI ] && topfmt=qcow2 || topfmt=raw
fsck_chain "$T/snap" "snapshot disk" "$top" "$topfmt"
