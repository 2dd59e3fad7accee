#!/bin/sh
# Networking: DNS rebinding and IPv6. An allowed name whose answer points
# into loopback or a private range gets no address (the record is removed,
# never pinned) and cannot be reached; an IPv6 connection no rule allows is
# refused with a RST (wget: "Connection refused" for that address, not a
# timeout), exactly like IPv4, and logged.
. tests/integration/lib.sh
. tests/integration/net.lib

run_mvm run $NET_DNS --allow loop.test --allow private.test --events "$T/events.jsonl" -- sh -c '
	for n in loop.test private.test; do
		timeout 10 nslookup $n; echo "ns-$n=$?"
		timeout 20 wget -q -O- http://$n:8080/hello.txt; echo "w-$n=$?"
	done
	# IPv6 comes from slirp router advertisements: wait for the route.
	i=0
	until ip -6 route | grep -q "^default" || [ $i -ge 100 ]; do i=$((i + 1)); sleep 0.1; done
	ip -6 route | grep -q "^default" && echo "v6-route=yes"
	timeout 20 wget -q -O- "http://[2001:db8::1]:8080/hello.txt"; echo "v6=$?"'
cat "$T/out" "$T/err"
expect_eq "mvm status" 0 "$rc"
expect_match "loop.test unreachable" 'w-loop.test=1' "$(cat "$T/out")"
expect_match "private.test unreachable" 'w-private.test=1' "$(cat "$T/out")"
if grep -Eq 'Address:? *(127\.0\.0\.1|10\.1\.2\.3)$' "$T/out"; then
	fail "a rebinding answer reached the guest: $(cat "$T/out")"
fi
expect_match "dnsmasq was asked (the name is allowed)" 'query\[A\] loop.test' "$(cat "$T/dns.log")"
expect_event "loopback answer refused" '"proto":"dns","dst":"127.0.0.1",.*"name":"loop.test","reason":"rebinding: answer in loopback range"'
expect_event "private answer refused" '"proto":"dns","dst":"10.1.2.3",.*"name":"private.test","reason":"rebinding: answer in private range"'

expect_match "guest has IPv6" 'v6-route=yes' "$(cat "$T/out")"
expect_match "IPv6 refused" 'v6=1' "$(cat "$T/out")"
expect_match "IPv6 refused by a reset, not timed out" '\(2001:db8::1\): Connection refused' "$(cat "$T/err")"
expect_event "IPv6 event" '"proto":"tcp","dst":"2001:db8::1","port":8080,.*"reason":"not-allowlisted"'
echo "net-rebind-v6: ok"
