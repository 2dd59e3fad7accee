#!/bin/sh
# mvm run exits with the command's status, 128+N for signals, 127 when missing.
. tests/integration/lib.sh

run_mvm run -- sh -c 'exit 7'
expect_eq "exit 7" 7 "$rc"
run_mvm run -- true
expect_eq "true" 0 "$rc"
run_mvm run -- sh -c 'kill -9 $$'
expect_eq "SIGKILL" 137 "$rc"
run_mvm run -- no-such-command-here
expect_eq "missing command" 127 "$rc"
expect_match "missing command message" 'no-such-command-here' "$(cat "$T/err")"
