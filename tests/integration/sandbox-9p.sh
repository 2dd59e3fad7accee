#!/bin/sh
# A checkout on 9p (the nested box mounts it so; elsewhere some network and
# FUSE mounts behave alike): a state directory there cannot hold the VMM's
# unix sockets, so `mvm create` says so, naming the path and MVM_STATE_DIR,
# before it creates anything; `mvm promote --out`, `mvm export` and `mvm cp`
# out (files, directories, symlinks) write there although 9p has no
# renameat2(RENAME_NOREPLACE), and still never replace an existing destination.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

# statfs reports the host's file system type through 9p2000.L (`stat -f -c %T`
# says ext2/ext3 or tmpfs there, never v9fs): ask /proc/mounts.
if ! awk -v p="$PWD" '$2 == p && $3 == "9p" { f = 1 } END { exit !f }' /proc/mounts; then
	[ "${MVM_IN_NESTED_BOX:-}" != 1 ] || fail "in the nested box the checkout should be a 9p mount"
	skip "the checkout is not a 9p mount (it is in the nested box: tests/nested/README.md)"
fi
mkdir -p build
N=$(mktemp -d "$PWD/build/it-9p.XXXXXX")
trap 'sb_cleanup; rm -rf "$N"' EXIT

rc=0
MVM_STATE_DIR="$N/state" "$MVM" create on9p >"$T/out" 2>"$T/err" || rc=$?
expect_eq "create with the state on 9p fails" 125 "$rc"
expect_match "names the path" "$N/state cannot hold the unix sockets" "$(cat "$T/err")"
expect_match "says what to do" "set MVM_STATE_DIR" "$(cat "$T/err")"
[ ! -e "$N/state/on9p" ] || fail "a half-made sandbox was left in $N/state"

mkdir -p "$T/w" && echo base > "$T/w/f"
sb_create box --copy "$T/w:/data/"
run_mvm exec box -- sh -c 'echo two > /data/w/g'
expect_eq "change the workspace" 0 "$rc"
run_mvm promote box --out "$N/bundle"
expect_eq "promote --out a 9p directory" 0 "$rc"
[ -f "$N/bundle/changes.patch" ] && [ -f "$N/bundle/report.json" ] || fail "bundle incomplete"
ls -a "$N" | grep -q '\.mvm-' && fail "a staging directory was left behind"

run_mvm export box /data/w "$N/exported"
expect_eq "export to a 9p directory" 0 "$rc"
expect_eq "exported file" base "$(cat "$N/exported/f")"

mkdir "$N/taken" && echo mine > "$N/taken/keep"
run_mvm export box /data/w "$N/taken"
[ "$rc" != 0 ] || fail "export replaced an existing directory"
expect_eq "existing directory untouched" mine "$(cat "$N/taken/keep")"
[ ! -e "$N/taken/f" ] || fail "export wrote into an existing directory"

# mvm cp out: a file and a directory (with a symlink inside), moved into
# place by the same no-replace fallback (link(2) for what is not a directory).
run_mvm exec box -- sh -c 'mkdir -p /data/cpd/sub && echo deep > /data/cpd/sub/f &&
	ln -s sub/f /data/cpd/l && echo one > /data/cpf'
expect_eq "make guest files" 0 "$rc"
run_mvm cp box:/data/cpf "$N/cpf"
expect_eq "cp a file out to 9p" 0 "$rc"
expect_eq "copied file" one "$(cat "$N/cpf")"
run_mvm cp box:/data/cpd "$N/"
expect_eq "cp a directory out to 9p" 0 "$rc"
expect_eq "copied tree" deep "$(cat "$N/cpd/sub/f")"
expect_eq "copied symlink" sub/f "$(readlink "$N/cpd/l")"
echo mine > "$N/cpt"
run_mvm cp box:/data/cpf "$N/cpt"
[ "$rc" != 0 ] || fail "cp out replaced an existing file"
expect_eq "existing file untouched" mine "$(cat "$N/cpt")"
ls -a "$N" | grep -q '\.mvm-' && fail "cp left a staging directory behind"

# restore (and fork, which shares its start) checks the state directory the
# same way before it makes anything there.
run_mvm snapshot box "$T/snap"
expect_eq "snapshot" 0 "$rc"
rc=0
MVM_STATE_DIR="$N/state2" "$MVM" restore "$T/snap" r9p >"$T/out" 2>"$T/err" || rc=$?
expect_eq "restore with the state on 9p fails" 125 "$rc"
expect_match "restore names the path" "$N/state2 cannot hold the unix sockets" "$(cat "$T/err")"
[ ! -e "$N/state2/r9p" ] || fail "restore left a half-made sandbox in $N/state2"
echo "sandbox-9p: ok"
