#!/bin/sh
# mvm run: the guest kernel runs the command and its output comes back.
. tests/integration/lib.sh

run_mvm run -- uname -a
expect_eq "uname exit status" 0 "$rc"
expect_match "uname output" '^Linux mvm? ?.*6\.1\.[0-9]+' "$(cat "$T/out")"

# No memory protection keys in the guest (vmm/vm.c: nopku). Under nested
# KVM on an emulated CPU the guest kernel otherwise ran with OSPKE on and PKU
# off (XSAVE dropped), where PKRU is not kept across signals: Chromium's
# renderers crashed (issue 17).
run_mvm run -- sh -c 'grep -c -w ospke /proc/cpuinfo; grep -o -w nopku /proc/cmdline'
expect_eq "pkeys off in the guest" "0
nopku" "$(cat "$T/out")"

# stdout and stderr stay separate.
run_mvm run -- sh -c 'echo to-out; echo to-err >&2'
expect_eq "status" 0 "$rc"
expect_eq "stdout" "to-out" "$(cat "$T/out")"
expect_eq "stderr" "to-err" "$(cat "$T/err")"

# Arguments keep spaces and quotes exactly.
run_mvm run -- printf '%s|' 'a b' "c'd" 'e"f'
expect_eq "argv round trip" "a b|c'd|e\"f|" "$(cat "$T/out")"
