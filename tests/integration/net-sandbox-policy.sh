#!/bin/sh
# A sandbox's network policy from create to restart: `mvm create` takes the
# same --allow/--policy/--dns-server/--publish as `mvm run`; `mvm net check`
# says what would pass and why; the host loopback can be opened at run time;
# rules changed at run time survive stop/start (they live in policy.json).
. tests/integration/lib.sh
. tests/integration/sandbox.lib
. tests/integration/net.lib
trap 'for n in $SANDBOXES; do "$MVM" rm -f "$n" >/dev/null 2>&1; done; net_cleanup' EXIT

bg busybox httpd -f -p 127.0.0.1:18080 -h "$T/www"
i=0
until busybox wget -q -O /dev/null http://127.0.0.1:18080/hello.txt 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "host loopback server did not start"; sleep 0.1
done

# Bad rules fail create before anything boots, and leave nothing behind.
run_mvm create badnet --allow 'example.com:443-80'
expect_eq "bad --allow status" 2 "$rc"
expect_match "bad --allow message" 'reversed' "$(cat "$T/err")"
run_mvm create badpub --publish 'bad:port'
expect_eq "bad --publish status" 2 "$rc"
run_mvm create baddns --dns-server dns.example.com
expect_eq "bad --dns-server status" 2 "$rc"
for n in badnet badpub baddns; do
	[ ! -e "$MVM_STATE_DIR/$n" ] || fail "a failed create left state for $n"
done

printf '{"version":1,"mode":"allowlist","allow":["allowed.test:8080/tcp"]}\n' > "$T/policy.json"
sb_create pol $NET_DNS --policy "$T/policy.json" --allow 203.0.113.20:8081/tcp \
	--publish 18001:8000 --memory 256M
get() { echo "timeout 20 wget -q -O- http://$1/hello.txt; echo \"w=\$?\""; }

run_mvm exec pol -- sh -c "$(get allowed.test:8080)"
expect_match "--policy rule at create" 'hello-from-test-host' "$(cat "$T/out")"
run_mvm exec pol -- sh -c "$(get allowed.test:8081)"
expect_match "other port refused" 'w=1' "$(cat "$T/out")"
run_mvm exec pol -- sh -c "$(get 203.0.113.20:8081)"
expect_match "--allow rule at create" 'hello-from-test-host' "$(cat "$T/out")"

# --publish at create: the host reaches a server in the sandbox.
"$MVM" exec pol -- sh -c 'echo pong | timeout 60 nc -l -p 8000' >"$T/nc.out" 2>&1 &
nc_pid=$!
ping_pong 18001 > "$T/client" 2>&1 || true
wait "$nc_pid" || true
expect_match "--publish at create" 'got pong' "$(cat "$T/client")"
expect_match "guest got the host's data" 'ping' "$(cat "$T/nc.out")"

# Dry runs: allowed and why, denied and why; status 0 / 1.
run_mvm net check pol allowed.test:8080/tcp
expect_eq "check allowed status" 0 "$rc"
expect_match "check allowed" '^allowed: .*allowed.test:8080/tcp' "$(cat "$T/out")"
run_mvm net check pol 203.0.113.20:8080
expect_eq "check denied status" 1 "$rc"
expect_match "check denied" '^denied: not-allowlisted' "$(cat "$T/out")"
run_mvm net check pol host-loopback:18080/tcp
expect_eq "check loopback status" 1 "$rc"
expect_match "check loopback" '^denied: .*host-loopback' "$(cat "$T/out")"
run_mvm net check pol 'example.com:1-2'
expect_eq "check bad dest" 125 "$rc"

# The host loopback: refused by default, opened at run time, closed again.
run_mvm exec pol -- sh -c "$(get 10.0.2.2:18080)"
expect_match "host loopback refused by default" 'w=1' "$(cat "$T/out")"
run_mvm net allow pol host-loopback:18080/tcp
expect_eq "allow host loopback at run time" 0 "$rc"
run_mvm exec pol -- sh -c "$(get 10.0.2.2:18080)"
expect_match "host loopback opened at run time" 'hello-from-test-host' "$(cat "$T/out")"
run_mvm net check pol host-loopback:18080/tcp
expect_eq "check loopback now allowed" 0 "$rc"
run_mvm net deny pol 203.0.113.20

# Run-time changes survive stop/start.
run_mvm stop pol
expect_eq "stop" 0 "$rc"
run_mvm net check pol 203.0.113.20:8081/tcp
expect_eq "stored policy: deny kept" 1 "$rc"
expect_match "stored policy says so" 'stored policy' "$(cat "$T/out")"
run_mvm net allow pol 203.0.113.10:8081/tcp
expect_eq "allow on a stopped sandbox" 0 "$rc"
run_mvm start pol
expect_eq "start" 0 "$rc"
run_mvm net show pol
expect_match "rules after restart" '"allow":\["allowed.test:8080/tcp","203.0.113.20:8081/tcp","host-loopback:18080/tcp","203.0.113.10:8081/tcp"\],"deny":\["203.0.113.20"\]' "$(cat "$T/out")"
run_mvm exec pol -- sh -c "$(get 10.0.2.2:18080); $(get 203.0.113.10:8081); $(get 203.0.113.20:8081)"
expect_eq "after restart: loopback open, stopped-time rule, deny holds" "hello-from-test-host
w=0
hello-from-test-host
w=0
w=1" "$(cat "$T/out")"
run_mvm net remove pol host-loopback:18080/tcp
expect_eq "remove" 0 "$rc"
run_mvm stop pol
run_mvm start pol
run_mvm exec pol -- sh -c "$(get 10.0.2.2:18080)"
expect_match "removed rule stays removed" 'w=1' "$(cat "$T/out")"

ev="$MVM_STATE_DIR/pol/events.jsonl"
grep -q '"dst":"10.0.2.2","port":18080,.*"reason":"host-loopback"' "$ev" ||
	fail "no host-loopback denial in events.jsonl: $(cat "$ev")"
run_mvm events pol
expect_match "mvm events shows the denial" '^20[0-9-]+T[0-9:.]+Z net-deny .*dst=10.0.2.2 port=18080 .*reason=host-loopback' "$(cat "$T/out")"
echo "net-sandbox-policy: ok"
