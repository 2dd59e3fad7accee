#!/bin/sh
# count_baseline.sh DIR [COMMIT]: build bench-count's peer for the net figure,
# the build before the network helper (COMMIT, default 2844fb6^), in a new
# git worktree at DIR, and print its mvm (MVM_BENCH_BASELINE=that).
# Two changes, neither on the network path: the guest kernel config of this
# checkout (both sides boot the same guest kernel; POSIX timers came later),
# and no seccomp filter in log mode (MVM_SECCOMP=log, the instr pass): that
# build loads its filters with libseccomp, which cannot make a LOG filter
# under valgrind (no seccomp call there to probe with). A filter runs in the
# kernel: it adds no user-space instruction either way.
set -eu
dir=$1 commit=${2:-2844fb6^}
f=$dir/vmm/confine/seccomp_filter.c
git worktree add --detach "$dir" "$commit" >&2
cp guest/kernel.config "$dir/guest/kernel.config"
sed -i 's/^\tctx = seccomp_init(confine_seccomp_log_mode() ? SCMP_ACT_LOG : SCMP_ACT_TRAP);/\tif (confine_seccomp_log_mode())\n\t\treturn 0;\n&/' "$f"
grep -q '^	if (confine_seccomp_log_mode())$' "$f" ||
	{ echo "count_baseline: $f is not the expected file (another commit?)" >&2; exit 1; }
make -C "$dir" -j2 all >&2
echo "$dir/build/mvm"
