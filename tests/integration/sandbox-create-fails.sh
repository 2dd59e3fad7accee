#!/bin/sh
# A failed `mvm create` leaves nothing to remove by hand (issue 26), on real
# KVM: a root image that is no file system (the guest cannot mount it and
# ends), then the KVM-free cases of tests/cli/create-leaves-nothing.sh.
# The console's end is printed, the name is free again, and a good create
# of that name works.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

head -c $((64 << 20)) /dev/zero >"$T/corrupt.img"
head -c 4096 /dev/urandom | dd of="$T/corrupt.img" bs=4096 seek=0 conv=notrunc 2>/dev/null
run_mvm create bad --image "$T/corrupt.img"
[ "$rc" != 0 ] || { "$MVM" rm -f bad; fail "create from a corrupt image succeeded"; }
expect_match "says it did not start" "bad did not start" "$(cat "$T/err")"
expect_match "shows the console's end" "the end of bad's console" "$(cat "$T/err")"
[ ! -e "$MVM_STATE_DIR/bad" ] || fail "state left: $(ls -A "$MVM_STATE_DIR/bad" | tr '\n' ' ')"
cg=$(find /sys/fs/cgroup -maxdepth 6 -type d -path "*/mvm/bad" 2>/dev/null | head -n 1)
[ -z "$cg" ] || fail "cgroup left: $cg"
run_mvm ls
expect_eq "mvm ls after the failure" "" "$(grep -w bad "$T/out" || true)"

# The name is free: a good create of it works.
sb_create bad
run_mvm exec bad -- echo fine
expect_eq "exec in the re-created sandbox" fine "$(cat "$T/out")"

MVM_STATE_DIR="$T/state2" tests/cli/create-leaves-nothing.sh "$MVM" || fail "create-leaves-nothing.sh"
echo "sandbox-create-fails: ok"
