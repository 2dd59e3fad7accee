#!/bin/sh
# Networking: an allowed name resolves (through the VMM's own resolver, at
# the test's dnsmasq) and connects; a name no rule allows gets NXDOMAIN from
# the VMM and the query never reaches the upstream server.
. tests/integration/lib.sh
. tests/integration/net.lib

run_mvm run $NET_DNS --allow allowed.test --events "$T/events.jsonl" -- sh -c '
	timeout 20 wget -q -O- http://allowed.test:8080/hello.txt; echo "wget=$?"
	timeout 10 nslookup blocked.test; echo "nslookup=$?"
	timeout 10 nslookup x1.secret.blocked.test; echo "nslookup2=$?"'
cat "$T/out" "$T/err"
expect_eq "mvm status" 0 "$rc"
expect_match "allowed name connects" 'hello-from-test-host' "$(cat "$T/out")"
expect_match "allowed wget status" 'wget=0' "$(cat "$T/out")"
expect_match "blocked name" "can't find blocked.test: NXDOMAIN" "$(cat "$T/out")"
expect_match "blocked subdomain" "can't find x1.secret.blocked.test: NXDOMAIN" "$(cat "$T/out")"

# The upstream saw the allowed name and never the blocked ones.
expect_match "dnsmasq saw the allowed name" 'query\[A\] allowed.test' "$(cat "$T/dns.log")"
if grep -q 'blocked.test' "$T/dns.log"; then
	fail "blocked name reached the upstream resolver: $(grep blocked.test "$T/dns.log")"
fi
expect_event "dns denial" '"proto":"dns".*"name":"blocked.test","reason":"name not allowlisted"'
expect_event "dns denial (subdomain)" '"name":"x1.secret.blocked.test"'
if grep -q '"name":"allowed.test"' "$T/events.jsonl"; then
	fail "allowed name logged as denied"
fi

# Without any rule nothing resolves: the default is deny.
rm -f "$T/events.jsonl"
run_mvm run $NET_DNS --events "$T/events.jsonl" -- sh -c '
	timeout 10 nslookup allowed.test; echo "nslookup=$?"'
expect_match "default deny" "can't find allowed.test: NXDOMAIN" "$(cat "$T/out")"
expect_event "default deny event" '"name":"allowed.test","reason":"name not allowlisted"'
echo "net-dns: ok"
