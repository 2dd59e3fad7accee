#!/bin/sh
# Issue 16: the network back-end (libslirp, glib) runs in its own confined
# process, mvm-net, never in the process that holds /dev/kvm and guest
# memory; the VMM is in an empty network namespace, the helper in its VMM's
# PID and IPC namespaces. For a sandbox and for
# `mvm run`: both processes under seccomp with no_new_privs, no libslirp or
# glib mapped beside /dev/kvm, no KVM descriptor and no guest RAM in the
# helper; the helper ends with its VMM, and its death is reported.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

MEM_MIB=384

filtered() {	# PID WHAT
	grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$1/status" || fail "$2: no no_new_privs"
	grep -q '^Seccomp:[[:space:]]*2$' "/proc/$1/status" ||
		fail "$2: $(grep '^Seccomp:' "/proc/$1/status")"
}

has_kvm() {	# PID: a descriptor on /dev/kvm or a KVM VM/vCPU
	ls -l "/proc/$1/fd" 2>/dev/null | grep -Eq '/dev/kvm|kvm-vm|kvm-vcpu'
}

# One mapping of at least the guest's RAM: guest memory (the helper must have none).
has_guest_ram() {	# PID
	python3 - "$1" "$MEM_MIB" <<'PY'
import sys
big = int(sys.argv[2]) << 20
for line in open("/proc/%s/maps" % sys.argv[1]):
    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
    if hi - lo >= big:
        sys.exit(0)
sys.exit(1)
PY
}

check_pair() {	# VMM HELPER WHAT
	filtered "$1" "$3 VMM"
	filtered "$2" "$3 network helper"
	grep -q . "/proc/$1/maps" 2>/dev/null || fail "$3: cannot read the VMM's maps"
	has_kvm "$1" || fail "$3: the VMM has no KVM descriptor (the check cannot see)"
	! grep -Eq 'libslirp|libglib' "/proc/$1/maps" ||
		fail "$3: the VMM maps $(grep -Eo 'lib(slirp|glib)[^ ]*' "/proc/$1/maps" | sort -u)"
	grep -q libslirp "/proc/$2/maps" || fail "$3: the helper has no libslirp (is it the helper?)"
	! has_kvm "$2" || fail "$3: the helper holds a KVM descriptor: $(ls -l /proc/$2/fd)"
	has_guest_ram "$1" || fail "$3: no guest RAM mapping in the VMM (the check cannot see)"
	! has_guest_ram "$2" || fail "$3: the helper maps something as large as guest RAM"
	[ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ] ||
		fail "$3: the VMM is still in the host's network namespace"
	[ "$(readlink "/proc/$2/ns/net")" = "$(readlink /proc/self/ns/net)" ] ||
		fail "$3: the helper is not on the host's network"
	# The VMM's PID and IPC namespaces hold the helper too: no host
	# process is in its sight or reach.
	own_pidns "$1" "$3 VMM"
	for ns in pid ipc; do
		[ "$(readlink "/proc/$2/ns/$ns")" = "$(readlink "/proc/$1/ns/$ns")" ] ||
			fail "$3: the helper is not in its VMM's $ns namespace"
	done
}

gone_within() {	# PID SECONDS
	i=0
	while kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; do
		i=$((i + 1))
		[ "$i" -le $(($2 * 10)) ] || return 1
		sleep 0.1
	done
}

sb_create nh --memory ${MEM_MIB}M
vmm=$(cat "$MVM_STATE_DIR/nh/pid")
run_mvm inspect nh --json
expect_eq "inspect: $(cat "$T/err")" 0 "$rc"
python3 - "$T/out" >"$T/helper" <<'PY' || fail "inspect --json: $(cat "$T/out")"
import json, sys
p = json.load(open(sys.argv[1]))["protections"]
h = p["helper"]
assert isinstance(p["helper_pid"], int) and h["pid"] == p["helper_pid"], p
assert h["seccomp"] == "filter" and h["no_new_privs"] is True, h
assert isinstance(h["landlock"], int) and h["landlock"] >= 1, h
assert "net" in p["namespaces"] and "pid" in p["namespaces"], p
assert h["namespaces"] == ["user", "mount", "ipc", "pid"], h
print(h["pid"])
PY
helper=$(cat "$T/helper")
check_pair "$vmm" "$helper" "sandbox"
run_mvm inspect nh
expect_match "inspect text" "helper pid: +$helper" "$(cat "$T/out")"

# The network works through the helper: the gateway's DNS answers (denied
# names get NXDOMAIN from the VMM; no upstream needed for that).
run_mvm exec nh -- sh -c 'nslookup denied.invalid 10.0.2.3 2>&1; true'
expect_match "DNS through the VMM" 'NXDOMAIN|can.t find|server can' "$(cat "$T/out")"

# Its death is reported, and the VMM runs on without a network.
kill -9 "$helper"
gone_within "$helper" 10 || fail "the helper did not die"
deadline=$(( $(date +%s) + 30 ))
until "$MVM" logs nh 2>/dev/null | grep -q "network helper mvm-net (pid $helper) was killed by signal 9"; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "helper death not reported: $("$MVM" logs nh | tail -5)"
	sleep 0.5
done
run_mvm exec nh -- echo still
expect_eq "VMM alive after its helper died" "still" "$(cat "$T/out")"
run_mvm inspect nh --json
python3 - "$T/out" <<'PY' || fail "inspect after the helper died: $(cat "$T/out")"
import json, sys
assert json.load(open(sys.argv[1]))["protections"]["helper"] is None
PY

# The helper ends with its VMM, even one killed outright.
sb_create nh2
vmm2=$(cat "$MVM_STATE_DIR/nh2/pid")
run_mvm inspect nh2 --json
helper2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["protections"]["helper_pid"])' "$T/out")
kill -9 "$vmm2"
gone_within "$helper2" 10 || fail "the helper outlived its killed VMM"

# mvm run: its VMM and that VMM's helper, while the command runs.
"$MVM" run --memory ${MEM_MIB}M -- sh -c 'sleep 30' >"$T/run.out" 2>"$T/run.err" &
runpid=$!
vmm=$(run_vmm_pid "$runpid") || fail "mvm run's sandbox did not come up: $(cat "$T/run.err")"
rhelper=$(grep -l "^PPid:[[:space:]]*$vmm$" /proc/[0-9]*/status 2>/dev/null |
	  xargs -r grep -l '^Name:[[:space:]]*mvm-net$' | head -1 | cut -d/ -f3)
[ -n "$rhelper" ] || fail "mvm run's VMM has no network helper"
check_pair "$vmm" "$rhelper" "mvm run"
wait "$runpid" || fail "mvm run: $(cat "$T/run.err")"
gone_within "$rhelper" 10 || fail "mvm run's helper outlived its VMM"
echo "confine-nethelper: ok"
