#!/bin/sh
# `mvm serve` and `mvm image import` are the programs mvm-serve and mvm-oci
# beside mvm (tools/cli/cmd_beside.h), so mvm, the VMM, links none of their
# libraries. KVM-free, in `make unit`:
#   - through mvm, both answer as before (help, a token added and listed, a
#     missing import source refused with status 1);
#   - a program of that name on PATH is never run; a copy of mvm with no
#     program beside it says which path it tried, status 125;
#   - mvm-serve with no mvm beside it refuses to start (it runs sandboxes
#     through that mvm, never through PATH).
#   beside.sh [MVM]
set -eu
MVM=${1:-build/mvm}
[ -x "$MVM" ] || { echo "beside: $MVM not built" >&2; exit 2; }
DIR=$(dirname "$MVM")
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-beside.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL beside: $*" >&2
	[ ! -s "$T/err" ] || sed 's/^/  | /' "$T/err" >&2
	exit 1
}

# run PROGRAM ARGS...: status in $rc, output in $T/out and $T/err.
run() {
	rc=0
	"$@" >"$T/out" 2>"$T/err" || rc=$?
}

# A trap on PATH: if any of these ran, the test would see its mark.
mkdir "$T/path"
for p in mvm mvm-serve mvm-oci; do
	printf '#!/bin/sh\necho "from PATH: %s" >&2\nexit 99\n' "$p" >"$T/path/$p"
	chmod +x "$T/path/$p"
done
PATH="$T/path:$PATH"
export PATH

run "$MVM" serve --help
[ "$rc" = 0 ] || fail "mvm serve --help: status $rc"
grep -q '^usage: mvm serve' "$T/out" || fail "mvm serve --help: no usage"
run "$MVM" image import --help
[ "$rc" = 0 ] || fail "mvm image import --help: status $rc"
grep -q '^usage: mvm image import SOURCE --name NAME' "$T/out" || fail "mvm image import --help: no usage"

run "$MVM" serve token add t1 --tokens "$T/tokens"
[ "$rc" = 0 ] || fail "serve token add: status $rc"
grep -Eq '^mvm_[0-9a-f]{64}$' "$T/out" || fail "serve token add printed no token: $(cat "$T/out")"
run "$MVM" serve token ls --tokens "$T/tokens"
[ "$rc" = 0 ] && grep -q '^t1	' "$T/out" || fail "serve token ls: status $rc, $(cat "$T/out")"
run "$MVM" serve --bogus
[ "$rc" = 2 ] || fail "mvm serve --bogus: status $rc, not 2 (usage)"

MVM_IMAGE_DIR="$T/images" run "$MVM" image import "oci:$T/none" --name x
[ "$rc" = 1 ] || fail "import of a missing layout: status $rc, not 1"
grep -q "mvm image: import: .*none" "$T/err" || fail "import of a missing layout: no reason"
[ ! -e "$T/images/x.ext4" ] || fail "import of a missing layout left an image"
! grep -q "from PATH" "$T/err" || fail "a program on PATH ran"

mkdir "$T/alone"
cp "$MVM" "$T/alone/mvm"
run "$T/alone/mvm" serve --help
[ "$rc" = 125 ] || fail "mvm serve without mvm-serve: status $rc, not 125"
grep -q "cannot run $T/alone/mvm-serve: No such file" "$T/err" || fail "mvm serve without mvm-serve: no clear error"
run "$T/alone/mvm" image import "oci:$T/none" --name x
[ "$rc" = 125 ] || fail "mvm image import without mvm-oci: status $rc, not 125"
grep -q "cannot run $T/alone/mvm-oci: No such file" "$T/err" || fail "mvm image import without mvm-oci: no clear error"

mkdir "$T/serve-alone"
cp "$DIR/mvm-serve" "$T/serve-alone/mvm-serve"
run "$T/serve-alone/mvm-serve" token ls --tokens "$T/tokens"
[ "$rc" = 125 ] || fail "mvm-serve without mvm: status $rc, not 125"
grep -q "no mvm beside this program" "$T/err" || fail "mvm-serve without mvm: no clear error"
echo "beside: mvm serve and mvm image import run mvm-serve and mvm-oci beside mvm, never from PATH"
