#!/bin/sh
# The dev image (built on the host by `make image-dev`: debootstrap needs
# root and the network, which the test box has neither of): pip, npm, git
# and curl in the guest fetch from registries this test serves on test hosts
# in a network namespace, through the sandbox's allowlist. The same registries
# are served on two hosts: with allowed.test:8090 and :4873 allowed, installs
# from them succeed; from blocked.test (refused by name: NXDOMAIN from the
# host) and from 203.0.113.20 (refused by address: a reset) they fail, every
# attempt is an event, and no server sees a request from those attempts. An
# npm package whose install script reaches for a host no rule allows
# installs, but its connection is refused and shows in `mvm events`.
#
# The registries: a PEP 503 simple index with a wheel built here, a git
# repository over git's dumb HTTP protocol and a plain file, served by
# `python3 -m http.server` on port 8090 (tests/integration/dev_registry.py);
# an npm registry, Verdaccio (tests/integration/verdaccio.lib) on port 4873,
# offline, serving the package this test built and published to it.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
store=${MVM_IMAGE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mvm/images}
[ -f "$store/dev.ext4" ] && [ -f "$store/dev.json" ] ||
	skip "no dev image in $store: build it on the host first (sudo make image-dev)"
command -v git >/dev/null || skip "git missing (make deps)"
. tests/integration/net.lib
. tests/integration/verdaccio.lib
trap 'for n in $SANDBOXES; do "$MVM" rm -f "$n" >/dev/null 2>&1; done; net_cleanup' EXIT

# ---- the registries, built here ----
reg=$T/reg
magic=$(python3 tests/integration/dev_registry.py "$reg" "$T/npm-package") ||
	fail "dev_registry.py"
# Verdaccio comes up and is given the npm package in the background, while
# the sandbox boots and pip runs (node and npm are slow to start in the box).
verdaccio_start "$T/npm-package"
mkdir -p "$T/src" "$reg/git"
git -C "$T/src" init -q -b main
echo "$magic" > "$T/src/README"
git -C "$T/src" add README
git -C "$T/src" -c user.name=mvm -c user.email=mvm@test.invalid commit -q -m "the test repository"
head=$(git -C "$T/src" rev-parse HEAD)
git clone -q --bare "$T/src" "$reg/git/demo.git"
git -C "$reg/git/demo.git" update-server-info
echo "$magic" > "$reg/hello.txt"

serve_registry "$reg"
blocked_seen=$(wc -l < "$T/blocked.log")

# ---- the sandbox ----
sb_create dev --image dev --memory 1024M --cpus 2 $NET_DNS \
	--allow allowed.test:8090/tcp --allow allowed.test:4873/tcp
ev=$MVM_STATE_DIR/dev/events.jsonl
gx() { run_mvm exec dev -- sh -c "export HOME=/root; $1"; }
dns_denials() { grep -c '"proto":"dns".*"name":"blocked.test"' "$ev" 2>/dev/null || true; }
# tcp_denials [PORT]: refused connections to 203.0.113.20:PORT (8090)
tcp_denials() { grep -c "\"proto\":\"tcp\",\"dst\":\"203.0.113.20\",\"port\":${1:-8090},.*\"reason\":\"not-allowlisted\"" "$ev" 2>/dev/null || true; }

# refused WHAT CMD CHECK [PORT]: in one guest command (each costs seconds in
# the emulated box), CMD with @HOST@ = blocked.test and CMD with @HOST@ =
# 203.0.113.20, side by side (the guest has two vCPUs, and npm and pip spend
# most of a refused attempt starting up), both fail (their output goes to
# $T/err), and CHECK fails afterwards (nothing was installed); each attempt
# added its denial event (a connection to PORT, 8090 unless given).
refused() {
	d0=$(dns_denials) t0=$(tcp_denials "${4:-8090}")
	cmd=$(printf '%s' "$2" | sed 's/@HOST@/$host/g')
	gx "for host in blocked.test 203.0.113.20; do ( ( $cmd ) 1>&2; echo \"\$host=\$?\" ) & done; wait
		( $3 ) >/dev/null 2>&1; echo \"check=\$?\""
	[ "$rc" = 0 ] || fail "$1, refused hosts: guest command status $rc"
	for k in blocked.test 203.0.113.20 check; do
		grep -Eq "^$k=[1-9][0-9]*\$" "$T/out" ||
			fail "$1: $k did not fail: $(tr '\n' ' ' < "$T/out"); $(tail -5 "$T/err")"
	done
	[ "$(dns_denials)" -gt "$d0" ] || fail "$1 from blocked.test: no DNS denial event: $(tail -3 "$ev")"
	[ "$(tcp_denials "${4:-8090}")" -gt "$t0" ] || fail "$1 from 203.0.113.20: no connection denial event: $(tail -3 "$ev")"
	echo "image-dev: $1 from blocked.test and 203.0.113.20 refused, each an event"
}

# The packages, and the tools at work (package managers' own start-up is
# slow in the emulated box: they run below, where they fetch).
gx 'dpkg-query -W -f "\${Package} \${Status}\n" python3 python3-pip python3-venv nodejs npm git build-essential curl ca-certificates | grep -c " install ok installed\$"
	python3 --version; node --version; git --version; curl --version | head -1 | cut -d" " -f1-2
	printf "int main(void) { return 42; }\n" > /tmp/t.c && cc -o /tmp/t /tmp/t.c && make --version | head -1; /tmp/t; echo "cc=$?"'
cat "$T/out"
expect_eq "the dev packages installed" 9 "$(sed -n 1p "$T/out")"
expect_match "python3" '^Python 3\.' "$(sed -n 2p "$T/out")"
expect_match "node" '^v[0-9]+\.' "$(sed -n 3p "$T/out")"
expect_match "git" '^git version ' "$(sed -n 4p "$T/out")"
expect_match "curl" '^curl [0-9]' "$(sed -n 5p "$T/out")"
expect_match "build-essential: cc and make" 'GNU Make.*cc=42' "$(tr '\n' ' ' < "$T/out")"

# ---- pip, from a PEP 503 simple index, into a venv (Debian's own Python
# is externally managed, PEP 668). The venv uses Debian's pip through
# --system-site-packages: ensurepip's copy of pip costs minutes in the box. ----
gx 'python3 -m venv --without-pip --system-site-packages /tmp/venv &&
	mkdir -p /tmp/app && echo "{\"name\": \"app\", \"version\": \"1.0.0\"}" > /tmp/app/package.json'
[ "$rc" = 0 ] || fail "python3 -m venv: $(tail -3 "$T/err")"
pip='/tmp/venv/bin/python -m pip install --no-cache-dir --disable-pip-version-check --retries 0 --timeout 60'
imp="/tmp/venv/bin/python -c 'import mvm_devtest; print(mvm_devtest.MAGIC)'"
refused "pip install" "$pip --index-url http://@HOST@:8090/simple/ --trusted-host @HOST@ mvm-devtest" "$imp"
gx "$pip --index-url http://allowed.test:8090/simple/ --trusted-host allowed.test mvm-devtest && $imp"
[ "$rc" = 0 ] || fail "pip install from the allowed index: status $rc: $(tail -5 "$T/out" "$T/err")"
expect_eq "pip: the served package imports" "$magic" "$(tail -1 "$T/out")"
grep -q 'GET /packages/mvm_devtest-1.0-py3-none-any.whl' "$T/allowed.log" ||
	fail "pip: the wheel was not fetched from the test index: $(cat "$T/allowed.log")"
echo "image-dev: pip install from the allowed index"

# ---- npm, from Verdaccio (up and given its package meanwhile) ----
verdaccio_ready
npm='npm install --no-audit --no-fund --no-update-notifier --fetch-retries 0 --fetch-timeout 60000'
req="cd /tmp/app && node -e 'console.log(require(\"mvm-devtest\"))'"
v0=$(verdaccio_requests)
refused "npm install" "cd /tmp/app && $npm --registry http://@HOST@:4873/ mvm-devtest" "$req" 4873
expect_eq "npm: requests that reached Verdaccio from the refused hosts" "$v0" "$(verdaccio_requests)"
t0=$(tcp_denials)
gx "cd /tmp/app && $npm --registry http://allowed.test:4873/ mvm-devtest && $req && cat /tmp/mvm-devtest-postinstall.txt"
[ "$rc" = 0 ] || fail "npm install from the allowed registry: status $rc: $(tail -5 "$T/out" "$T/err")"
expect_eq "npm: the served package loads" "$magic" "$(tail -2 "$T/out" | head -1)"
grep -q "req: 'GET /mvm-devtest/-/mvm-devtest-1.0.0.tgz', bytes: 0/[1-9]" "$T/verdaccio.log" ||
	fail "npm: the tarball was not fetched from Verdaccio: $(grep -o "requested '[^']*'" "$T/verdaccio.log")"
# The install script ran and its reach for 203.0.113.20 was reset.
expect_eq "npm: the install script's connection" "probe=refused ECONNREFUSED" "$(tail -1 "$T/out")"
[ "$(tcp_denials)" -gt "$t0" ] || fail "npm: the install script's attempt is no event: $(tail -3 "$ev")"
echo "image-dev: npm install from Verdaccio on the allowed host; its install script stopped"

# ---- git clone over HTTP, and curl ----
refused "git clone" 'timeout 120 git clone -q http://@HOST@:8090/git/demo.git /tmp/demo-$host' 'test -e /tmp/demo-blocked.test || test -e /tmp/demo-203.0.113.20'
gx 'timeout 120 git clone -q http://allowed.test:8090/git/demo.git /tmp/demo && git -C /tmp/demo rev-parse HEAD && cat /tmp/demo/README'
[ "$rc" = 0 ] || fail "git clone from the allowed host: status $rc: $(tail -5 "$T/err")"
expect_eq "git: the commit" "$head" "$(sed -n 1p "$T/out")"
expect_eq "git: the file" "$magic" "$(sed -n 2p "$T/out")"
echo "image-dev: git clone from the allowed host"
refused "curl" 'curl -fsS --max-time 60 -o /tmp/hello-$host.txt http://@HOST@:8090/hello.txt' 'test -f /tmp/hello-blocked.test.txt || test -f /tmp/hello-203.0.113.20.txt'
gx 'curl -fsS --max-time 60 http://allowed.test:8090/hello.txt'
expect_eq "curl from the allowed host" "$magic" "$(cat "$T/out")"

# Nothing reached the refused host's server; the events say what was tried.
expect_eq "requests that reached the refused host" "$blocked_seen" "$(wc -l < "$T/blocked.log")"
run_mvm events dev
expect_match "mvm events: the refused name" 'net-deny .*blocked\.test' "$(cat "$T/out")"
expect_match "mvm events: the refused address" 'net-deny .*dst=203\.0\.113\.20 port=8090 .*reason=not-allowlisted' "$(cat "$T/out")"
echo "image-dev: ok"
