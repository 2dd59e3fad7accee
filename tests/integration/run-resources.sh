#!/bin/sh
# --cpus and --memory reach the guest.
. tests/integration/lib.sh

run_mvm run --cpus 2 -- nproc
expect_eq "nproc status" 0 "$rc"
expect_eq "nproc" 2 "$(cat "$T/out")"

run_mvm run --memory 2G -- free -m
expect_eq "free status" 0 "$rc"
total=$(awk '/^Mem:/ {print $2}' "$T/out")
[ -n "$total" ] || fail "no Mem: line in: $(cat "$T/out")"
# The kernel keeps some for itself; 2 GiB must show as well over 1.8 GiB.
[ "$total" -ge 1850 ] && [ "$total" -le 2048 ] || fail "free -m total $total MiB, expected ~2048"

run_mvm run --memory 5G -- free -m
expect_eq "5G (RAM above the 4 GiB hole) status" 0 "$rc"
total=$(awk '/^Mem:/ {print $2}' "$T/out")
[ "$total" -ge 4800 ] || fail "5G guest shows $total MiB"
