#!/bin/sh
# Environment values off the command line (issue 27 item 9): `mvm run` and
# `mvm create` take them from a descriptor (--env-fd) or a file
# (--env-file) as NUL-ended K=V records; they reach the guest whole (a
# newline inside a value included) and no mvm process's cmdline holds one.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

secret="v-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
printf 'FROMFD=%s\0MULTI=a\nb\0' "$secret" > "$T/env.fd"
printf 'FROMFILE=%s\0' "$secret" > "$T/env.file"
chmod 600 "$T/env.fd" "$T/env.file"

out=$("$MVM" run --net none --env-fd 3 --env-file "$T/env.file" -- \
	sh -c 'printf "%s|%s|%s" "$FROMFD" "$FROMFILE" "$MULTI"' 3< "$T/env.fd") ||
	fail "mvm run with --env-fd/--env-file"
[ "$out" = "$secret|$secret|a
b" ] || fail "mvm run: the guest saw '$out'"

sb_create envsb --net none --memory 256M --env-file "$T/env.file"
printf '%s' "$secret" > "$T/pattern"	# from a file: grep's own cmdline must not hold it
grep -lFf "$T/pattern" /proc/[0-9]*/cmdline 2>/dev/null | grep . && fail "a value on a command line"
out=$("$MVM" exec envsb -- sh -c 'printf "%s" "$FROMFILE"') || fail "exec"
[ "$out" = "$secret" ] || fail "create --env-file: the guest saw '$out'"

# A malformed record is refused, and its text is not echoed.
printf '=%s\0' "$secret" > "$T/bad.env"
if "$MVM" create envbad --net none --env-file "$T/bad.env" 2>"$T/err"; then
	SANDBOXES="$SANDBOXES envbad"
	fail "a record without a name was taken"
fi
grep -q "$secret" "$T/err" && fail "the refusal echoed the value: $(cat "$T/err")"
[ ! -e "$MVM_STATE_DIR/envbad" ] || fail "the refused create left state behind"
exit 0
