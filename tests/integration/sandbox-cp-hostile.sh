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

# Copies out never touch an existing checkout: a new destination only, and
# --merge never writes its .git nor goes through a host symlink.
mkdir -p "$T/co/repo/.git/hooks"
printf '[core]\n\tbare = false\n' > "$T/co/repo/.git/config"
echo 'exit 0' > "$T/co/repo/.git/hooks/post-checkout"
echo mine > "$T/co/repo/file"
ln -s "$T/escape" "$T/co/repo/link"
git_state() {
	(cd "$T/co/repo" && find .git -print0 | sort -z | xargs -0 ls -ld --time-style=+%s.%N &&
		find .git -type f -print0 | sort -z | xargs -0 sha256sum && ls -l link)
}
git_state > "$T/git.before"
run_mvm exec evil -- sh -c '
	mkdir -p /tmp/repo/.git/hooks /tmp/repo/sub /tmp/x/repo &&
	echo "touch /tmp/pwned" > /tmp/repo/.git/hooks/post-checkout &&
	printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" > /tmp/repo/.git/config &&
	echo new > /tmp/repo/file && echo theirs > /tmp/repo/sub/x &&
	ln -s .git/hooks /tmp/repo/hooklink && echo through > /tmp/x/repo/link &&
	mkdir /tmp/e && echo x > "/tmp/e/$(printf "\033[31mred")"'
expect_eq "build repo tree" 0 "$rc"

run_mvm cp evil:/tmp/repo "$T/co/"
[ "$rc" != 0 ] || fail "cp out onto an existing directory succeeded without --merge"
expect_match "exists message" "exists" "$(cat "$T/err")"
expect_eq "not merged" "mine" "$(cat "$T/co/repo/file")"

run_mvm cp --merge evil:/tmp/repo "$T/co/"
expect_eq "cp --merge" 0 "$rc"
expect_eq "merged file" "new" "$(cat "$T/co/repo/file")"
expect_eq "merged subdirectory" "theirs" "$(cat "$T/co/repo/sub/x")"
[ ! -L "$T/co/repo/hooklink" ] || fail "symlink into .git copied"
expect_match "git refusal listed" "skipped .git" "$(cat "$T/err")"

run_mvm cp --merge evil:/tmp/repo/.git "$T/co/repo/"
[ "$rc" != 0 ] || fail "cp --merge onto .git succeeded"
run_mvm cp --merge evil:/tmp/x/repo "$T/co/"
[ "$rc" != 0 ] || fail "cp --merge wrote through a host symlink"
expect_eq "outside untouched by merge" "precious" "$(cat "$T/escape")"
git_state > "$T/git.after"
cmp -s "$T/git.before" "$T/git.after" || fail ".git changed: $(diff "$T/git.before" "$T/git.after")"

# A new destination: whole or absent, staged beside it, no .git.
run_mvm cp evil:/tmp/repo "$T/fresh"
expect_eq "cp to a new directory" 0 "$rc"
expect_eq "new copy" "theirs" "$(cat "$T/fresh/sub/x")"
[ ! -e "$T/fresh/.git" ] || fail ".git copied out"
[ -z "$(ls -A "$T" | grep mvm-)" ] || fail "staging directory left behind: $(ls -A "$T")"

# Guest names reach the terminal escaped.
run_mvm cp evil:/tmp/e "$T/esc"
expect_eq "cp of an odd name" 0 "$rc"
if grep -q "$(printf '\033')" "$T/err"; then fail "raw escape sequence printed"; fi
expect_match "escaped name" 'x1b' "$(cat "$T/err")"
echo "sandbox-cp-hostile: ok"
