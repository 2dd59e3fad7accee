#!/bin/sh
# A long-lived sandbox: exec streams, exit codes, stdin, env, cwd, timeout, PTY,
# parallel execs; nothing from the host environment leaks in.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

SECRET_HOST_VAR=leak-me-not sb_create box --env FROM_CREATE=yes --memory 256M

run_mvm exec box -- echo hello
expect_eq "echo" 0 "$rc"
expect_eq "echo output" "hello" "$(cat "$T/out")"

run_mvm exec box -- sh -c 'echo to-out; echo to-err >&2; exit 7'
expect_eq "exit status" 7 "$rc"
expect_eq "stdout alone" "to-out" "$(cat "$T/out")"
expect_eq "stderr alone" "to-err" "$(cat "$T/err")"

run_mvm exec box -- sh -c 'kill -TERM $$'
expect_eq "signal status" 143 "$rc"

run_mvm exec box -- /no/such/program
expect_eq "missing program" 127 "$rc"

printf 'line1\nline2\n' > "$T/in"
rc=0; "$MVM" exec box -i -- wc -l < "$T/in" > "$T/out" 2>"$T/err" || rc=$?
expect_eq "stdin piped" 0 "$rc"
expect_eq "stdin line count" "2" "$(tr -d ' ' < "$T/out")"

# Options before NAME, as `docker exec -i NAME CMD` teaches (issue 20 item 5):
# `--` ends the options and is never run as the command.
rc=0; "$MVM" exec -i box -- cat < "$T/in" > "$T/out" 2>"$T/err" || rc=$?
expect_eq "exec -i NAME -- cat" 0 "$rc"
expect_eq "exec -i NAME -- cat output" "$(cat "$T/in")" "$(cat "$T/out")"
rc=0; "$MVM" exec -e A=1 box -w /tmp -- sh -c 'echo "$A $(pwd)"' > "$T/out" 2>"$T/err" || rc=$?
expect_eq "options before and after NAME" "1 /tmp" "$(cat "$T/out")"
run_mvm exec box -- -- true
expect_eq "a command named -- is refused" 2 "$rc"

head -c 3000000 /dev/urandom > "$T/big"
rc=0; "$MVM" exec box -i -- sha256sum < "$T/big" > "$T/out" || rc=$?
expect_eq "big stdin" "$(sha256sum < "$T/big" | cut -d' ' -f1)" "$(cut -d' ' -f1 "$T/out")"

run_mvm exec box -e ONE=1 -w /tmp -- sh -c 'echo "$ONE $FROM_CREATE $(pwd)"'
expect_eq "env and cwd" "1 yes /tmp" "$(cat "$T/out")"

SECRET_HOST_VAR=leak-me-not run_mvm exec box -- env
if grep -q SECRET_HOST_VAR "$T/out"; then fail "host environment leaked: $(cat "$T/out")"; fi
expect_match "guest PATH" "^PATH=" "$(grep ^PATH= "$T/out")"

# The timeout ends the command: status 124, and the process is gone (the
# agent killed it; it was neither left running nor waited for).
run_mvm exec box --timeout 2 -- sh -c 'echo $$ > /tmp/to.pid; exec sleep 100'
expect_eq "timeout status" 124 "$rc"
expect_match "timeout message" "timed out" "$(cat "$T/err")"
run_mvm exec box -- sh -c 'kill -0 "$(cat /tmp/to.pid)" 2>/dev/null && echo alive || echo gone'
expect_eq "the timed-out command was killed" gone "$(cat "$T/out")"

# The guest sees no host paths: only its own root.
run_mvm exec box -- sh -c "test -e '$(pwd)' && echo visible || echo hidden"
expect_eq "no host paths" "hidden" "$(cat "$T/out")"

# Several execs at once.
for i in 1 2 3; do "$MVM" exec box -- sh -c "sleep 1; echo par$i" > "$T/par$i" & done
wait
for i in 1 2 3; do expect_eq "parallel exec $i" "par$i" "$(cat "$T/par$i")"; done

# PTY mode: a terminal inside, stderr merged.
run_mvm exec box -t -- sh -c 'test -t 1 && echo tty'
expect_eq "pty exec" 0 "$rc"
expect_match "pty output" "tty" "$(cat "$T/out")"
echo "sandbox-exec: ok"
