#!/bin/sh
# The browser image (built on the host by `make image-browser`: debootstrap
# needs root and the network, which the test box has neither of):
# mvm-browser-start brings up the display, the live view and Chromium as the
# unprivileged user `browser` with Chromium's own sandbox on (renderers in
# their own user and PID namespaces, under seccomp-bpf); CDP answers in the
# guest; a second start only reports; mvm-screenshot gives a PNG of the
# whole display; a name the sandbox's policy does not allow fails to resolve
# for Chromium (NXDOMAIN from the host) while an allowed one loads.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
store=${MVM_IMAGE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mvm/images}
[ -f "$store/browser.ext4" ] && [ -f "$store/browser.json" ] ||
	skip "no browser image in $store: build it on the host first (make image-browser)"
. tests/integration/net.lib
trap 'for n in $SANDBOXES; do "$MVM" rm -f "$n" >/dev/null 2>&1; done; net_cleanup' EXIT
# Everything in the guest is emulated twice over in the box: Chromium's
# first start takes minutes there, seconds on real KVM.
wait_s=${MVM_BROWSER_TIMEOUT:-420}
json='{"cdp_port":9222,"vnc_port":6080,"display":":99","headless":false}'

sb_create br --image browser --memory 1536M --cpus 2 $NET_DNS --allow allowed.test:8080/tcp

run_mvm exec br -- mvm-screenshot
expect_eq "screenshot without a display: status" 1 "$rc"
expect_match "screenshot without a display: message" "no display :99" "$(cat "$T/err")"

t0=$(date +%s)
run_mvm exec br -e MVM_BROWSER_TIMEOUT=$wait_s -- mvm-browser-start
start_s=$(( $(date +%s) - t0 ))
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "mvm-browser-start: status $rc"; }
expect_eq "start: the JSON line" "$json" "$(cat "$T/out")"
echo "browser-image: Chromium and the display up in ${start_s}s"

run_mvm exec br -- sh -c 'cat /run/mvm-browser/chromium.pid; curl -fsS --max-time 60 http://127.0.0.1:9222/json/version'
expect_eq "CDP in the guest: status" 0 "$rc"
pid1=$(head -1 "$T/out")
expect_match "CDP /json/version" '"webSocketDebuggerUrl": *"ws://127.0.0.1:9222/devtools/browser/' "$(cat "$T/out")"
expect_match "CDP names Chrome" '"Browser": *"(Headless)?Chrome/[0-9]' "$(cat "$T/out")"

run_mvm exec br -e MVM_BROWSER_TIMEOUT=$wait_s -- sh -c 'mvm-browser-start && cat /run/mvm-browser/chromium.pid'
expect_eq "second start: status" 0 "$rc"
expect_eq "second start: same JSON, same Chromium" "$json
$pid1" "$(cat "$T/out")"

# The live view is served, and nothing listens beyond the guest's loopback
# (the host reaches these ports only through its vsock relay).
run_mvm exec br -- sh -c 'curl -fsS --max-time 60 http://127.0.0.1:6080/vnc.html | grep -c "<title>noVNC</title>"
	cat /proc/net/tcp /proc/net/tcp6 | awk "\$4 == \"0A\" { split(\$2, a, \":\"); print a[2], a[1] }" |
	grep -E "^(2406|17C0|170C) " |
	sed -e "s/ 0100007F\$/ lo/" -e "s/ 0\{24\}01000000\$/ lo/" | sort -u'
expect_eq "noVNC page, loopback-only listeners (9222, 6080, 5900)" "1
170C lo
17C0 lo
2406 lo" "$(cat "$T/out")"

# Chromium's traffic obeys the policy: the allowed name loads, the other
# one never resolves (the host answers NXDOMAIN; Chromium's own resolver).
run_mvm exec br -e CDP_TIMEOUT=$wait_s -- python3 -c "$(cat tests/integration/cdp_nav.py)" \
	http://allowed.test:8080/hello.txt http://blocked.test:8080/hello.txt
if [ "$rc" != 0 ]; then
	cat "$T/out" "$T/err" >&2
	"$MVM" exec br -- sh -c 'tail -n 30 /var/log/mvm-browser.log; pgrep -a chromium | cut -c1-90' >&2
	fail "CDP navigation: status $rc"
fi
expect_eq "Chromium: allowed page / denied name" "ok hello-from-test-host
error net::ERR_NAME_NOT_RESOLVED" "$(cat "$T/out")"
run_mvm exec br -- sh -c 'curl -sS --max-time 60 http://blocked.test:8080/hello.txt; echo "curl=$?"'
expect_match "guest resolver: denied name" 'curl=6' "$(cat "$T/out")"
run_mvm events br
expect_match "the denied name is in the events" 'blocked\.test' "$(cat "$T/out")"

# As the unprivileged user, sandbox on: every Chromium process runs as uid
# 1000, none was told --no-sandbox, and each renderer (the page above made
# one) sits in its own user and PID namespace under a seccomp-bpf filter.
run_mvm exec br -- sh -c '
	for p in $(pgrep -x chromium); do
		awk "/^Uid:/ { print \"uid\", \$2, \$3 }" /proc/$p/status
		tr "\0" "\n" < /proc/$p/cmdline | grep -x -- --no-sandbox
	done | sort -u
	for p in $(pgrep -f -- --type=[r]enderer); do
		s=$(awk "/^Seccomp:/ { print \$2 }" /proc/$p/status)
		u=same; [ "$(readlink /proc/$p/ns/user)" = "$(readlink /proc/1/ns/user)" ] || u=own
		n=same; [ "$(readlink /proc/$p/ns/pid)" = "$(readlink /proc/1/ns/pid)" ] || n=own
		echo "renderer seccomp=$s userns=$u pidns=$n"
	done | sort -u'
expect_eq "Chromium's processes and its renderers' sandbox" "uid 1000 1000
renderer seccomp=2 userns=own pidns=own" "$(cat "$T/out")"

t0=$(date +%s)
"$MVM" exec br -- mvm-screenshot >"$T/shot.png" 2>"$T/err" || fail "mvm-screenshot: $(cat "$T/err")"
shot_s=$(( $(date +%s) - t0 ))
expect_eq "PNG signature" "89504e470d0a1a0a" "$(od -An -tx1 -N8 "$T/shot.png" | tr -d ' \n')"
# IHDR: width and height, big-endian, at offset 16: 1280 x 800.
expect_eq "PNG is the whole display" "0000050000000320" "$(od -An -tx1 -j16 -N8 "$T/shot.png" | tr -d ' \n')"
echo "browser-image: screenshot of $(wc -c < "$T/shot.png") bytes in ${shot_s}s"
echo "browser-image: ok"
