#!/bin/sh
# Issue 16: the system calls each confined VMM thread really makes, for the
# seccomp tables (confine/seccomp_*.c) and their unit test: a sandbox's whole
# life under `strace -f`. Calls made by a thread after it installed its
# filter are summed per kind of thread (vcpu: the threads that run KVM_RUN;
# nethelper: the network helper process mvm-net; main: the others) into
# build/confine-strace.txt. Passes when no filter
# stopped the VMM.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v strace >/dev/null || skip "no strace"
out=build/confine-strace.txt
SANDBOXES="st"
strace -f -qq -o "$T/trace" "$MVM" create st --memory 256M >"$T/create.out" 2>&1 &
tracer=$!
deadline=$(( $(date +%s) + 300 ))
until "$MVM" exec st -- true >/dev/null 2>&1; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "no boot under strace: $(cat "$T/create.out")"
	kill -0 "$tracer" 2>/dev/null || fail "create under strace ended: $(cat "$T/create.out")"
	sleep 1
done
mkdir -p "$T/seed" && echo x >"$T/seed/f"
"$MVM" cp "$T/seed" st:/data/ >/dev/null
"$MVM" exec st -- sh -c 'cat /data/seed/f; nslookup a.invalid 10.0.2.3; wget -q -T 2 -O- http://10.0.2.2:9/; true' >/dev/null 2>&1
"$MVM" net allow st 127.0.0.1:9/tcp >/dev/null
"$MVM" checkpoint st c1 >/dev/null || fail "checkpoint under strace"
"$MVM" exec st -- sh -c 'echo y > /data/y; sync' >/dev/null
"$MVM" rollback st c1 >/dev/null || fail "rollback under strace"
"$MVM" snapshot st "$T/snap" >/dev/null || fail "snapshot under strace"
"$MVM" inspect st >/dev/null
"$MVM" stop st >/dev/null || fail "stop under strace"
wait "$tracer" || true
! "$MVM" logs st | grep seccomp || fail "a filter stopped the VMM under strace"

# Per thread: the calls after its seccomp(SECCOMP_SET_MODE_FILTER, ...).
awk '
{ tid = $1; line = $0; sub(/^[0-9]+ +/, "", line) }
line ~ /^seccomp\(SECCOMP_SET_MODE_FILTER/ { on[tid] = 1; next }
line ~ /KVM_RUN/ { vcpu[tid] = 1 }
line ~ /^execve\(".*\/mvm-net"/ { helper[tid] = 1 }
on[tid] && match(line, /^[a-z_0-9]+\(/) {
	name = substr(line, 1, RLENGTH - 1); calls[tid, name]++; names[name] = 1; tids[tid] = 1
}
END {
	for (k in calls) { split(k, a, SUBSEP); kind = (a[1] in vcpu) ? "vcpu" : (a[1] in helper) ? "nethelper" : "main"; sum[kind, a[2]] += calls[k] }
	for (k in sum) { split(k, a, SUBSEP); print a[1], a[2], sum[k] }
}' "$T/trace" | sort >"$out"
[ -s "$out" ] || fail "no confined calls traced"
echo "confine-strace: $(wc -l <"$out") thread-kind/call pairs in $out"
