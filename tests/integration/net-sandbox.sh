#!/bin/sh
# Networking in a long-lived sandbox: deny by default, then rules changed at
# run time through the control API (mvm net allow/deny/show), denials in the
# sandbox's events.jsonl.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
. tests/integration/net.lib
trap 'for n in $SANDBOXES; do "$MVM" rm -f "$n" >/dev/null 2>&1; done; net_cleanup' EXIT

sb_create netbox --memory 256M
get='timeout 20 wget -q -O- http://203.0.113.10:8080/hello.txt; echo "w=$?"'

run_mvm exec netbox -- sh -c "$get"
expect_match "denied by default" 'w=1' "$(cat "$T/out")"

run_mvm net allow netbox 203.0.113.10:8080/tcp
expect_eq "net allow" 0 "$rc"
run_mvm exec netbox -- sh -c "$get"
expect_match "allowed at run time" 'hello-from-test-host' "$(cat "$T/out")"

run_mvm net show netbox
expect_eq "net show" 0 "$rc"
expect_match "show lists the rule" '"allow":\["203.0.113.10:8080/tcp"\]' "$(cat "$T/out")"

run_mvm net deny netbox 203.0.113.10
expect_eq "net deny" 0 "$rc"
run_mvm exec netbox -- sh -c "$get"
expect_match "denied again" 'w=1' "$(cat "$T/out")"
run_mvm net show netbox
expect_match "show lists the deny" '"deny":\["203.0.113.10"\]' "$(cat "$T/out")"

run_mvm net allow netbox 'example.com:443-80'
expect_eq "bad rule status" 125 "$rc"
expect_match "bad rule message" 'reversed' "$(cat "$T/err")"

run_mvm exec netbox -- sh -c 'timeout 10 nslookup exfil.example.org; echo "n=$?"'
expect_match "names denied" 'NXDOMAIN' "$(cat "$T/out")"

ev="$MVM_STATE_DIR/netbox/events.jsonl"
grep -q '"type":"net-deny","proto":"tcp","dst":"203.0.113.10","port":8080' "$ev" ||
	fail "no tcp denial in events.jsonl: $(cat "$ev")"
grep -q '"name":"exfil.example.org"' "$ev" || fail "no dns denial in events.jsonl: $(cat "$ev")"
echo "net-sandbox: ok"
