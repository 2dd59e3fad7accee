#!/bin/sh
# apt in a `debian` sandbox installs from a repository the operator allows,
# and from nowhere else. The test builds a signed flat apt repository here,
# offline (dev_apt.py: two .deb packages made with dpkg-deb, one depending
# on the other, indexed by dpkg-scanpackages, InRelease signed by a gpg key
# made for this run), and serves it on both test hosts of net.lib. The guest
# trusts the key through `signed-by` (the operator hands it in; the server
# does not), and its only apt source is this repository.
# - allowed.test:8090 allowed: `apt-get update && apt-get install` succeeds,
#   the dependency comes along, the installed files have the served content;
#   the package's postinst reaches for 203.0.113.20 and is refused (an event).
# - from blocked.test (refused by name) and 203.0.113.20 (refused by
#   address) apt fails, nothing is installed, each attempt is an event.
# - nothing reached any other host: the refused host's server saw no
#   request, every denial is one of those above (or apt's SRV query for the
#   repository's host, _http._tcp.HOST, which no rule allows either), and
#   the only name the sandbox's DNS asked the test net's server for is
#   allowed.test.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
store=${MVM_IMAGE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mvm/images}
[ -f "$store/debian.ext4" ] && [ -f "$store/debian.json" ] ||
	skip "no debian image in $store: build it on the host first (make image-debian)"
for tool in dpkg-deb dpkg-scanpackages gpg gpgconf; do
	command -v "$tool" >/dev/null || skip "$tool missing (make deps)"
done
. tests/integration/net.lib
trap 'for n in $SANDBOXES; do "$MVM" rm -f "$n" >/dev/null 2>&1; done; net_cleanup' EXIT

# ---- the repository, built here, served on both test hosts ----
step "building the apt repository"
magic=$(python3 tests/integration/dev_registry.py --apt "$T/mvm-apttest.gpg" "$T/reg") ||
	fail "dev_registry.py --apt"
serve_registry "$T/reg"
blocked_seen=$(wc -l < "$T/blocked.log")
allowed_seen=$(wc -l < "$T/allowed.log")

# ---- the sandbox: the key handed in, the image's own sources set aside
# (in the sandbox's overlay: the image is not written) ----
sb_create apt --image debian --memory 512M $NET_DNS --allow allowed.test:8090/tcp
ev=$MVM_STATE_DIR/apt/events.jsonl
run_mvm exec -i apt -- sh -c 'mkdir -p /etc/apt/keyrings &&
	cat > /etc/apt/keyrings/mvm-apttest.gpg && chmod 644 /etc/apt/keyrings/mvm-apttest.gpg &&
	mv /etc/apt/sources.list.d/debian.sources /root/ &&
	! test -e /etc/apt/sources.list && ls -A /etc/apt/sources.list.d/ | wc -l' < "$T/mvm-apttest.gpg"
[ "$rc" = 0 ] || fail "guest apt set-up: status $rc"
expect_eq "apt sources left in the guest" 0 "$(tr -d '\r' < "$T/out")"

# The guest's apt, against one host: a sources line for HOST, then update
# (every failed fetch an error: a refused connection is only a warning by
# default) and install. No retries: a refusal is final.
apt_from() {
	printf '%s' "echo \"deb [signed-by=/etc/apt/keyrings/mvm-apttest.gpg] http://$1:8090/apt/ ./\" > /etc/apt/sources.list.d/mvm-apttest.list &&
		apt-get -q -o Acquire::Retries=0 update --error-on=any &&
		DEBIAN_FRONTEND=noninteractive apt-get -q -o Acquire::Retries=0 install -y --no-install-recommends mvm-apttest"
}
dns_denials() { grep -c '"type":"net-deny","proto":"dns".*"name":"blocked.test"' "$ev" 2>/dev/null || true; }
tcp_denials() { grep -c '"type":"net-deny","proto":"tcp","dst":"203.0.113.20","port":8090,.*"reason":"not-allowlisted"' "$ev" 2>/dev/null || true; }

# ---- refused: by name, then by address, in one guest command ----
d0=$(dns_denials) t0=$(tcp_denials)
run_mvm exec apt -- sh -c "for host in blocked.test 203.0.113.20; do
		( $(apt_from '$host') ) 1>&2; echo \"\$host=\$?\"
	done
	dpkg-query -W mvm-apttest mvm-apttest-data >/dev/null 2>&1; echo \"installed=\$?\"
	test -e /usr/share/mvm-apttest/magic; echo \"file=\$?\""
[ "$rc" = 0 ] || fail "apt from the refused hosts: guest command status $rc"
for k in blocked.test 203.0.113.20 installed file; do
	grep -Eq "^$k=[1-9][0-9]*\$" "$T/out" ||
		fail "apt from the refused hosts: $k did not fail: $(tr '\n' ' ' < "$T/out"); $(tail -5 "$T/err")"
done
grep -q "Could not resolve 'blocked.test'" "$T/err" ||
	fail "apt from blocked.test: not refused by name: $(grep -E '^(E|W|Err):' "$T/err")"
grep -q "Could not connect to 203.0.113.20:8090.*Connection refused" "$T/err" ||
	fail "apt from 203.0.113.20: not refused by a reset: $(grep -E '^(E|W|Err):' "$T/err")"
[ "$(dns_denials)" -gt "$d0" ] || fail "apt from blocked.test: no DNS denial event: $(tail -3 "$ev")"
[ "$(tcp_denials)" -gt "$t0" ] || fail "apt from 203.0.113.20: no connection denial event: $(tail -3 "$ev")"
echo "image-apt: apt from blocked.test and 203.0.113.20 refused, nothing installed, each an event"

# ---- allowed: update, install with its dependency, the files there ----
t0=$(tcp_denials)
run_mvm exec apt -- sh -c "$(apt_from allowed.test) && mvm-apttest &&
	cat /usr/share/mvm-apttest/magic /var/lib/mvm-apttest/probe &&
	dpkg-query -W -f '\${Package} \${Version} \${Status}\n' mvm-apttest mvm-apttest-data"
[ "$rc" = 0 ] || fail "apt from allowed.test: status $rc: $(tail -5 "$T/out" "$T/err")"
tr -d '\r' < "$T/out" | tail -5 > "$T/got"
expect_eq "the installed program's output" "$magic" "$(sed -n 1p "$T/got")"
expect_eq "the installed data file" "$magic" "$(sed -n 2p "$T/got")"
expect_eq "mvm-apttest installed" "mvm-apttest 1.0 install ok installed" "$(sed -n 4p "$T/got")"
expect_eq "its dependency installed" "mvm-apttest-data 1.0 install ok installed" "$(sed -n 5p "$T/got")"
for f in InRelease Packages.gz mvm-apttest_1.0_all.deb mvm-apttest-data_1.0_all.deb; do
	grep -q "\"GET /apt/\\(\\./\\)\\?$f HTTP" "$T/allowed.log" ||
		fail "apt: $f was not fetched from the test repository: $(tail -n +$((allowed_seen + 1)) "$T/allowed.log")"
done
# The postinst's connection to 203.0.113.20 was reset by the host.
expect_match "the postinst's connection" '^probe status=1: .*Connection refused' "$(sed -n 3p "$T/got")"
[ "$(tcp_denials)" -gt "$t0" ] || fail "apt: the postinst's attempt is no event: $(tail -3 "$ev")"
echo "image-apt: apt-get install from allowed.test, with its dependency; its postinst stopped"

# ---- nothing reached any other host ----
expect_eq "requests that reached the refused host" "$blocked_seen" "$(wc -l < "$T/blocked.log")"
# apt first asks DNS for the repository host's SRV record (_http._tcp.HOST,
# RFC 2782), a name no rule allows: refused, an event, and apt goes on to
# HOST itself. Those are the attempts above too.
other=$(grep '"type":"net-deny"' "$ev" |
	grep -Ev '"proto":"dns".*"name":"(_http\._tcp\.)?(blocked|allowed)\.test"' |
	grep -v '"proto":"tcp","dst":"203.0.113.20","port":8090,' || true)
[ -z "$other" ] || fail "denials other than this test's: $other"
names=$(sed -n 's/.*query\[[A-Z]*\] \([^ ]*\) from .*/\1/p' "$T/dns.log" | sort -u | tr '\n' ' ')
expect_eq "names the sandbox resolved upstream" "allowed.test " "$names"
run_mvm events apt
expect_match "mvm events: the refused name" 'net-deny .*blocked\.test' "$(cat "$T/out")"
expect_match "mvm events: the refused address" 'net-deny .*dst=203\.0\.113\.20 port=8090 .*reason=not-allowlisted' "$(cat "$T/out")"
echo "image-apt: ok"
