#!/bin/sh
# Networking: holes in the policy's boundary stay closed (issue 15).
# - A UDP datagram from guest port 68 to a real host's port 67 (the old DHCP
#   exemption) never arrives, in every mode but open.
# - The host's own addresses are denied even in open mode.
# - A private-range rule with a port opens only that port, in open mode too.
# - The connection cap refuses the connection beyond it with a RST and an event.
. tests/integration/lib.sh
. tests/integration/net.lib

command -v gcc >/dev/null || skip "gcc missing"
gcc -static -O1 -o "$T/net_probe" tests/integration/net_probe.c || fail "cannot build net_probe"
PROBE="--copy $T/net_probe:/net_probe"

: > "$T/dhcp.out"
bg ip netns exec "$NS" socat -u UDP-RECV:67,bind=198.51.100.2 "OPEN:$T/dhcp.out,append"
bg busybox httpd -f -p 198.51.100.1:8090 -h "$T/www"
# a private address on the test host (its httpd listens on every address)
ip -n "$NS" addr add 10.9.0.1/32 dev lo
ip route replace 10.9.0.0/16 via 198.51.100.2 || fail "route to the private test net"
i=0
until busybox wget -q -O /dev/null http://198.51.100.1:8090/hello.txt 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "httpd on the host address did not come up"
	sleep 0.2
done

tunnel='/net_probe udp 68 198.51.100.2 67'

# allowlist with a rule for something else, and a connection cap of 4
cat > "$T/policy.json" <<'JSON'
{ "version": 1, "mode": "allowlist", "allow": ["203.0.113.10:8080/tcp"],
  "limits": { "connections": 4 } }
JSON
run_mvm run $PROBE --policy "$T/policy.json" --events "$T/events.jsonl" -- sh -c "
	$tunnel tunnel-allowlist
	/net_probe conns 203.0.113.10 8080 8"
cat "$T/out" "$T/err"
expect_eq "mvm status (allowlist)" 0 "$rc"
expect_match "the guest sent it" 'sent' "$(cat "$T/out")"
expect_event "tunnel denied" '"proto":"udp","dst":"198.51.100.2","port":67,.*"reason":"not-allowlisted"'
expect_match "connection cap" 'connected=4 refused=4' "$(cat "$T/out")"
expect_event "cap event" '"proto":"tcp","dst":"203.0.113.10","port":8080,.*"reason":"connection limit \(4\) reached"'

# allowlist with a rule naming the host, another port
run_mvm run $PROBE --allow 198.51.100.2:9999/udp -- $tunnel tunnel-otherport
expect_eq "mvm status (other port)" 0 "$rc"

# mode none, with a network device (from a policy file)
echo '{ "version": 1, "mode": "none" }' > "$T/none.json"
run_mvm run $PROBE --policy "$T/none.json" -- $tunnel tunnel-none
expect_eq "mvm status (none)" 0 "$rc"

# open: the datagram is ordinary traffic to a public address and arrives;
# the host's own address is not public, even in open mode; a private range
# rule opens its port only
run_mvm run $PROBE --net open --allow 10.9.0.0/16:8080/tcp -- sh -c "
	$tunnel tunnel-open
	timeout 20 wget -q -O- http://198.51.100.1:8090/hello.txt; echo host=\$?
	timeout 20 wget -q -O- http://203.0.113.10:8080/hello.txt; echo test=\$?
	timeout 20 wget -q -O- http://10.9.0.1:8080/hello.txt; echo p8080=\$?
	timeout 20 wget -q -O- http://10.9.0.1:8081/hello.txt; echo p8081=\$?"
cat "$T/out" "$T/err"
expect_eq "mvm status (open)" 0 "$rc"
expect_match "host address refused" 'host=1' "$(cat "$T/out")"
expect_match "test host reached" 'test=0' "$(cat "$T/out")"
expect_match "private rule's port" 'p8080=0' "$(cat "$T/out")"
expect_match "private range, other port" 'p8081=1' "$(cat "$T/out")"
i=0
until grep -q tunnel-open "$T/dhcp.out"; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "open mode: the datagram did not arrive (the probe is broken)"
	sleep 0.2
done
# Sent before the open one, on the same path: they would be here by now.
expect_eq "only open mode's datagram arrived" "tunnel-open" "$(cat "$T/dhcp.out")"
echo "net-boundary: ok"
