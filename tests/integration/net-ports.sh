#!/bin/sh
# Networking: a port-restricted rule admits that port of the name's
# addresses and refuses another; a CIDR rule admits an IP literal;
# run-time policy from a JSON file.
. tests/integration/lib.sh
. tests/integration/net.lib

run_mvm run $NET_DNS --allow allowed.test:8080/tcp --events "$T/events.jsonl" -- sh -c '
	timeout 20 wget -q -O- http://allowed.test:8080/hello.txt; echo "p8080=$?"
	timeout 20 wget -q -O- http://allowed.test:8081/hello.txt; echo "p8081=$?"'
cat "$T/out" "$T/err"
expect_eq "mvm status" 0 "$rc"
expect_match "allowed port" 'p8080=0' "$(cat "$T/out")"
expect_match "allowed port body" 'hello-from-test-host' "$(cat "$T/out")"
expect_match "other port refused" 'p8081=1' "$(cat "$T/out")"
expect_event "other port" '"proto":"tcp","dst":"203.0.113.10","port":8081,.*"reason":"not-allowlisted"'
if grep -q '"port":8080' "$T/events.jsonl"; then
	fail "allowed port logged as denied"
fi

cat > "$T/policy.json" <<'JSON'
{ "version": 1, "mode": "allowlist", "allow": ["203.0.113.0/24:8081/tcp"],
  "deny": ["203.0.113.20"] }
JSON
run_mvm run --policy "$T/policy.json" -- sh -c '
	timeout 20 wget -q -O- http://203.0.113.10:8081/hello.txt; echo "cidr=$?"
	timeout 20 wget -q -O- http://203.0.113.20:8081/hello.txt; echo "denied=$?"'
cat "$T/out" "$T/err"
expect_match "CIDR rule" 'cidr=0' "$(cat "$T/out")"
expect_match "deny wins" 'denied=1' "$(cat "$T/out")"

run_mvm run --policy "$T/nonexistent.json" -- true
expect_eq "bad policy status" 125 "$rc"
expect_match "bad policy message" 'policy' "$(cat "$T/err")"
run_mvm run --allow 'example.com:443-80' -- true
expect_eq "bad rule status" 125 "$rc"
expect_match "bad rule message" "reversed" "$(cat "$T/err")"
echo "net-ports: ok"
