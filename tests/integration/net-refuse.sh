#!/bin/sh
# Networking: what no rule allows fails at once with a clear error in the
# guest and an event on the host: an IP literal (TCP RST: the guest's wget
# says "Connection refused" for that very address, which only a reset gives;
# a dropped SYN would end in a timeout instead), UDP to any address
# (ICMP admin-prohibited; nothing arrives), ping, the host's loopback through the
# gateway, DNS to another resolver. --net none: no network device at all.
. tests/integration/lib.sh
. tests/integration/net.lib

bg busybox httpd -f -p 127.0.0.1:18080 -h "$T/www"
sleep 0.5

run_mvm run $NET_DNS --allow allowed.test:8080/tcp --events "$T/events.jsonl" -- sh -c '
	timeout 20 wget -q -O- http://203.0.113.20:8080/hello.txt; echo "ip-literal=$?"
	echo leak > /tmp/leak; timeout 5 tftp -p -l /tmp/leak 203.0.113.20 9999; echo "udp=$?"
	timeout 5 ping -c 1 -W 2 203.0.113.20; echo "ping=$?"
	timeout 20 wget -q -O- http://10.0.2.2:18080/hello.txt; echo "loopback=$?"
	timeout 10 nslookup allowed.test 198.51.100.2; echo "other-resolver=$?"'
cat "$T/out" "$T/err"
expect_eq "mvm status" 0 "$rc"
expect_match "IP literal refused" 'ip-literal=1' "$(cat "$T/out")"
expect_match "IP literal refused by a reset, not timed out" '\(203\.0\.113\.20\): Connection refused' "$(cat "$T/err")"
expect_match "host loopback refused" 'loopback=1' "$(cat "$T/out")"
expect_match "host loopback refused by a reset, not timed out" '\(10\.0\.2\.2\): Connection refused' "$(cat "$T/err")"
expect_match "other resolver" 'other-resolver=1' "$(cat "$T/out")"
# tftp and ping use unconnected sockets: the ICMP "administratively
# prohibited" answer does not fail them, so they end by timeout or error.
expect_match "UDP not delivered" 'udp=[1-9]' "$(cat "$T/out")"
expect_match "ping not answered" 'ping=[1-9]' "$(cat "$T/out")"
expect_event "IP literal" '"proto":"tcp","dst":"203.0.113.20","port":8080,.*"reason":"not-allowlisted"'
expect_event "UDP" '"proto":"udp","dst":"203.0.113.20","port":9999'
expect_event "host loopback" '"proto":"tcp","dst":"10.0.2.2","port":18080,.*"reason":"host-loopback"'
expect_event "other resolver" '"dst":"198.51.100.2","port":53'
expect_event "ping" '"proto":"icmp","dst":"203.0.113.20"'
sleep 1
[ ! -s "$T/udp.out" ] || fail "UDP datagram reached the test host: $(cat "$T/udp.out")"

# host-loopback:PORT opens exactly that port of the host's 127.0.0.1.
run_mvm run --allow host-loopback:18080/tcp -- sh -c '
	timeout 20 wget -q -O- http://10.0.2.2:18080/hello.txt; echo "loopback=$?"'
expect_match "host loopback allowed by rule" 'hello-from-test-host' "$(cat "$T/out")"

# No stderr noise without --events: one summary line at exit.
run_mvm run -- sh -c 'timeout 20 wget -q -O- http://203.0.113.20:8080/ 2>/dev/null; echo "w=$?"'
expect_match "summary on stderr" 'network: 1 connection attempt\(s\) denied' "$(cat "$T/err")"

# --net none: no device.
run_mvm run --net none -- ls /sys/class/net
expect_eq "--net none status" 0 "$rc"
if grep -q eth0 "$T/out"; then fail "--net none: the guest has eth0"; fi
echo "net-refuse: ok"
