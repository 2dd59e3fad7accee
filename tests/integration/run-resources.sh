#!/bin/sh
# --cpus and --memory reach the guest; the VMM's own memory stays small.
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

# The VMM's own memory (issue 20): peak RSS minus the guest RAM it touched,
# as `--timing` reports it, stays within 3 MiB on the sandbox path, with the
# default NIC and without. (4.9 MiB before small thread stacks, build-time
# seccomp programs and the heap settings; make bench-boot has the detail.)
for net in "" "--net none"; do
	run_mvm run --timing $net -- true
	expect_eq "run --timing $net: status" 0 "$rc"
	kib=$(sed -n 's/.*vmm-overhead \(-\{0,1\}[0-9]*\) KiB.*/\1/p' "$T/err")
	[ -n "$kib" ] || fail "no vmm-overhead in: $(cat "$T/err")"
	[ "$kib" -le 3072 ] || fail "mvm run $net: VMM overhead $kib KiB > 3072 KiB ($(grep memory: "$T/err"))"
	echo "run-resources: VMM overhead ${net:-with the default NIC}: $kib KiB"
done
