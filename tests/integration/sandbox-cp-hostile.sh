#!/bin/sh
# cp out of a hostile guest tree: escaping symlinks, device nodes and FIFOs
# are skipped with a message; nothing lands outside the chosen directory.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

sb_create evil
run_mvm exec evil -- sh -c '
	mkdir -p /tmp/h/d && echo ok > /tmp/h/ok &&
	ln -s /etc/passwd /tmp/h/abs && ln -s ../../../escape /tmp/h/d/up &&
	ln -s ../ok /tmp/h/d/fine && mkfifo /tmp/h/fifo && mknod /tmp/h/null c 1 3 &&
	ln -s / /tmp/h/rootlink'
expect_eq "build hostile tree" 0 "$rc"
mkdir -p "$T/dst"
echo precious > "$T/escape"
run_mvm cp evil:/tmp/h "$T/dst"
expect_eq "cp out" 0 "$rc"
expect_eq "regular file copied" "ok" "$(cat "$T/dst/h/ok")"
expect_eq "inside link kept" "../ok" "$(readlink "$T/dst/h/d/fine")"
[ ! -e "$T/dst/h/abs" ] && [ ! -L "$T/dst/h/abs" ] || fail "absolute symlink copied"
[ ! -L "$T/dst/h/d/up" ] || fail "escaping symlink copied"
[ ! -L "$T/dst/h/rootlink" ] || fail "link to / copied"
[ ! -e "$T/dst/h/fifo" ] || fail "FIFO copied"
[ ! -e "$T/dst/h/null" ] || fail "device node copied"
expect_eq "outside untouched" "precious" "$(cat "$T/escape")"
expect_match "messages" "skipped" "$(cat "$T/err")"

# A guest file over an existing host FIFO is refused, not blocked on.
mkfifo "$T/dst/fifo-target"
run_mvm exec evil -- sh -c 'echo x > /tmp/fifo-target'
rc=0; timeout 60 "$MVM" cp evil:/tmp/fifo-target "$T/dst/" 2>"$T/err" || rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "cp onto a FIFO: status $rc"
echo "sandbox-cp-hostile: ok"
