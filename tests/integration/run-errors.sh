#!/bin/sh
# Bad kernels, bad flags and guest panics give clear errors and status 125/2.
. tests/integration/lib.sh
guest=$(dirname "$MVM")/guest

run_mvm run --kernel "$T/nope" -- true
expect_eq "missing kernel status" 125 "$rc"
expect_match "missing kernel message" 'nope.*No such file' "$(cat "$T/err")"

head -c 4000 "$guest/vmlinux" > "$T/trunc"
run_mvm run --kernel "$T/trunc" -- true
expect_eq "truncated kernel status" 125 "$rc"
expect_match "truncated kernel message" 'kernel .*(trunc|out of file|exceeds)' "$(cat "$T/err")"

head -c 100000 /dev/urandom > "$T/junk"
run_mvm run --kernel "$T/junk" -- true
expect_eq "junk kernel status" 125 "$rc"
expect_match "junk kernel message" 'kernel' "$(cat "$T/err")"

run_mvm run --cpus zero -- true
expect_eq "bad --cpus status" 2 "$rc"
run_mvm run --memory 12Q -- true
expect_eq "bad --memory status" 2 "$rc"
run_mvm run --memory 16M -- true
expect_eq "too little memory status" 125 "$rc"

# Init dying is a kernel panic: the VMM must say so, not hang.
run_mvm run --cmdline rdinit=/bin/false -- true
expect_eq "panic status" 125 "$rc"
expect_match "panic message" 'kernel panic' "$(cat "$T/err")"
