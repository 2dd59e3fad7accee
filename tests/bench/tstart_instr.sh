#!/bin/bash
# tstart_instr.sh TREE...: the CLI's instructions of `mvm create --template`
# up to the VMM's start, on this host, without KVM (the VMM then fails on a
# host without usable KVM, or boots on one with it: either way the count
# stops where the CLI forks it). For each source tree TREE with a built
# build/mvm and build/libmvm.a (this checkout, and e.g. a worktree of the
# commit before issue 27): tests/bench/tpl_fixture.c compiled against that
# tree makes a sealed template as its `mvm template create` would (a
# `--net none --memory 256M --disk-size 128M` sandbox's), then callgrind
# counts one start (--dump-before=sb_start_serving: the first dump is
# everything before). Deterministic: a count, not a time. Prints
# "tstart TREE pre-vmm N total M" per tree.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 TREE..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "tstart_instr: needs valgrind" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mvm-tstart.XXXXXX")
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
LIBS="$(pkg-config --libs libcjson libseccomp nettle libmicrohttpd libarchive) -lfdt -lpthread"
i=0
for tree in "$@"; do
	tree=$(cd "$tree" && pwd)
	i=$((i + 1))
	d=$T/$i
	mkdir -p "$d/tpl" "$d/state"
	touch "$d/state/.sealed-v1"	# a state root in use: no first-use sealing
	# shellcheck disable=SC2046,SC2086 # flag lists, split on purpose
	cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$tree" $(pkg-config --cflags libcjson) \
		-o "$d/fixture" "$here/tpl_fixture.c" "$tree/build/libmvm.a" $LIBS
	export MVM_TEMPLATE_DIR=$d/tpl MVM_STATE_DIR=$d/state MVM_HOST_KEY=$d/host.key
	"$d/fixture" "$d/tpl/tpl" "$d/fixstate"
	valgrind --tool=callgrind --trace-children=no --child-silent-after-fork=yes \
		--dump-before=sb_start_serving --callgrind-out-file="$d/cg" --log-file="$d/vg" \
		"$tree/build/mvm" create t --template tpl >"$d/out" 2>&1 || true
	pre=$(awk '/^summary:/ {print $2}' "$d/cg.1" 2>/dev/null)
	[ -n "$pre" ] || { echo "tstart_instr: $tree: the start never reached the VMM:" >&2; cat "$d/out" >&2; exit 1; }
	echo "tstart $tree pre-vmm $pre total $(sed -n 's/.*I *refs: *//p' "$d/vg" | tr -d ,)"
	"$tree/build/mvm" rm -f t >/dev/null 2>&1 || true
done
