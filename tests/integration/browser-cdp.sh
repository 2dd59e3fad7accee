#!/bin/sh
# Issue 17 with the real browser image: puppeteer-core (tests/browser/)
# connects to `mvm browser`'s endpoint exactly as users do, opens a page on
# an allowlisted test site in a network namespace, fills a form, reads the
# server's answer and takes a CDP screenshot; a site that is not allowed
# fails (NXDOMAIN) and shows in `mvm events`; the browser cannot reach the
# host's loopback; the endpoint answers on host 127.0.0.1 only; `mvm
# screenshot` is a PNG of the display's size that is not blank; Chromium
# runs sandboxed as the unprivileged user; neither a web page in the
# user's browser (a foreign Origin, a DNS-rebound Host) nor a page in the
# sandbox drives DevTools or noVNC, nor does another local user's
# puppeteer-core or noVNC page (the relay serves its owner only); a
# checkpoint/rollback brings the
# page back, drops open CDP connections, and clients reconnect. Then the
# browser template (issue 18): the running browser taken as template
# `browser` (it references the browser image, never copies it); a sandbox
# from it answers `mvm browser` at once with the Chromium that was running
# (no new start), through its own relay, with the page open at the template's
# time, under its own hostname.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
. tests/integration/net.lib
trap 'sb_cleanup; net_cleanup' EXIT

"$MVM" image ls 2>/dev/null | grep -q '^browser' || skip "no browser image (make image-browser)"
command -v node >/dev/null || fail "node is missing (tools/deps.sh installs nodejs)"
BC=$(node_client browser)
cdp_check() { node "$BC/cdp-check.mjs" "$@"; }
# Progress on stderr: lib.sh's step (the runner shows the log's tail).
# What the guest and the relay said, when a step fails.
diag() {
	"$MVM" exec web -- sh -c 'tail -n 15 /var/log/mvm-browser.log; echo "chromium processes: $(pgrep -c chromium)"; wget -q -T 30 -O- http://127.0.0.1:9222/json/version | head -c 120' 2>&1 | sed 's/^/  guest: /' >&2
	tail -n 5 "$MVM_STATE_DIR/web/relay.log" 2>/dev/null | sed 's/^/  relay log: /' >&2
	"$MVM" logs web 2>/dev/null | tail -n 8 | sed 's/^/  console: /' >&2
	# A guest kernel that panicked or reset says why before its last lines.
	"$MVM" logs web 2>/dev/null | grep -E -m 40 -B 2 -A 12 'Kernel panic|BUG:|Oops|RIP:|Restarting|Out of memory|segfault|general protection' |
		head -n 60 | sed 's/^/  guest kernel: /' >&2
}
# cdp_fail WHAT: a CDP client step failed; show why, then fail.
cdp_fail() { diag; fail "$@"; }
# jget JSON KEY...: one value of a JSON text (None for null).
jget() {
	python3 -c 'import json, sys
v = json.loads(sys.argv[1])
for k in sys.argv[2:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v)' "$@"
}

# The test site: a form whose answer comes from the server (busybox httpd CGI).
cat > "$T/www/form.html" <<'HTML'
<!doctype html><html><body style="background:#fff">
<h1 style="color:#c00">mvm browser test</h1>
<form action="/cgi-bin/greet" method="get"><input id="name" name="name"><button id="go">Go</button></form>
</body></html>
HTML
mkdir -p "$T/www/cgi-bin"
cat > "$T/www/cgi-bin/greet" <<'SH'
#!/bin/sh
printf 'Content-Type: text/html\r\n\r\n'
printf '<!doctype html><html><body style="background:#fff"><h1 id="answer">hello %s</h1>' "${QUERY_STRING#name=}"
printf '<div style="background:#08f;width:400px;height:200px"></div></body></html>\n'
SH
chmod 755 "$T/www/cgi-bin/greet"
# A service on the host's own loopback that the browser must never reach.
echo "host-loopback-secret" > "$T/secret.txt"
bg python3 -m http.server 18555 --bind 127.0.0.1 --directory "$T"

step "create"
sb_create web --image browser --memory 1024M --cpus 2 $NET_DNS --allow allowed.test:8080/tcp
step "mvm browser"
t0=$(date +%s)
run_mvm browser --json web
[ "$rc" = 0 ] || cdp_fail "mvm browser: status $rc"
step "mvm browser took $(( $(date +%s) - t0 )) s"
ep=$(cat "$T/out")
cdp=$(jget "$ep" cdp)
port=${cdp##*:}
expect_match "cdp" '^http://127\.0\.0\.1:[0-9]+$' "$cdp"
expect_match "ws" "^ws://127\\.0\\.0\\.1:$port/devtools/browser/[A-Za-z0-9-]+\$" "$(jget "$ep" ws)"
expect_match "vnc" '^http://127\.0\.0\.1:[0-9]+/vnc\.html$' "$(jget "$ep" vnc)"

# noVNC's page comes through the relay too.
vnc=$(jget "$ep" vnc)
python3 -c 'import sys,urllib.request; r=urllib.request.urlopen(sys.argv[1], timeout=120); assert r.status == 200 and b"noVNC" in r.read()' "$vnc" ||
	fail "noVNC page through the relay"

# Chromium sees the Host header the client sent (127.0.0.1:PORT, an IP: accepted)
# and builds webSocketDebuggerUrl from it, so the host's port comes back.
python3 - "$port" <<'PY' || fail "Host header through the relay"
import json, sys, urllib.request
p = sys.argv[1]
for host in ("127.0.0.1:" + p, "localhost:" + p):
    req = urllib.request.Request("http://127.0.0.1:%s/json/version" % p, headers={"Host": host})
    v = json.load(urllib.request.urlopen(req, timeout=120))
    assert v["webSocketDebuggerUrl"].startswith("ws://%s/devtools/browser/" % host), v
PY

# A web page in the user's browser (docs/browser-image.md): Chromium refuses
# a DevTools WebSocket whose Origin is another site's and an HTTP request
# whose Host is a DNS-rebound name (it sees both as sent: the relay passes
# them on), while CDP libraries (no Origin) connect. noVNC's websockify
# checks neither, so the relay does: the same requests get its 403, and the
# user's own noVNC page (Origin http://127.0.0.1:PORT) reaches VNC.
step "Origin and Host checks"
page=$(python3 -c 'import json, sys, urllib.request
v = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % sys.argv[1], timeout=120))
print([t for t in v if t["type"] == "page"][0]["webSocketDebuggerUrl"].split("/", 3)[3])' "$port") ||
	fail "no page target in /json/list"
browser_path=/$(jget "$ep" ws | cut -d/ -f4-)
python3 tests/integration/origin_probe.py "$port" > "$T/probe" 2>&1 <<CASES || cdp_fail "DevTools origin checks: $(grep -v '^ok' "$T/probe")"
ws $browser_path 127.0.0.1:{p} http://evil.example refused
ws /$page 127.0.0.1:{p} http://evil.example refused
ws $browser_path evil.example:{p} http://evil.example:{p} refused
get /json/version evil.example:{p} - refused
get /json/list evil.example:{p} http://evil.example:{p} refused
ws $browser_path 127.0.0.1:{p} - 101
ws /$page 127.0.0.1:{p} - 101
get /json/version 127.0.0.1:{p} - 200
CASES
sed 's/^/  cdp: /' "$T/probe" >&2
vnc_port=$(echo "$vnc" | cut -d: -f3 | cut -d/ -f1)
python3 tests/integration/origin_probe.py "$vnc_port" > "$T/probe" 2>&1 <<'CASES' || cdp_fail "noVNC origin checks: $(grep -v '^ok' "$T/probe")"
ws /websockify 127.0.0.1:{p} http://evil.example refused
ws /websockify evil.example:{p} http://evil.example:{p} refused
get /vnc.html evil.example:{p} - refused
ws /websockify 127.0.0.1:{p} http://127.0.0.1:{p} rfb
ws /websockify localhost:{p} - rfb
CASES
sed 's/^/  vnc: /' "$T/probe" >&2
# The form, through puppeteer's connect({browserURL}).
step "puppeteer: form"
cdp_check form "$cdp" "http://allowed.test:8080" > "$T/form.json" || cdp_fail "puppeteer: form"
form=$(cat "$T/form.json")
expect_eq "the server's answer" "hello mvm-agent" "$(jget "$form" answer)"
expect_eq "CDP screenshot is a PNG" "89504e470d0a1a0a" "$(jget "$form" png)"
expect_match "puppeteer followed our ws URL" "^ws://127\\.0\\.0\\.1:$port/" "$(jget "$form" ws)"

# Another local user (uid 65534) with the same stock clients: its
# puppeteer-core connect({browserURL}) and its noVNC page load get nothing
# (the relay closes its connections at once), and relay.log says whose.
# (cdp-check.mjs fails when node's loop runs dry with the step unsettled,
# which is how puppeteer ends when the relay closes on it.)
step "puppeteer and noVNC as uid 65534"
as_other() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
st=0
as_other node "$BC/cdp-check.mjs" pages "$cdp" > "$T/other.json" 2>"$T/other.err" || st=$?
[ "$st" != 0 ] ||
	fail "uid 65534's puppeteer-core drove the browser (status 0): $(cat "$T/other.json"); stderr: $(tail -5 "$T/other.err")"
grep -q 'cdp-check pages:' "$T/other.err" ||
	fail "uid 65534's client did not fail in puppeteer (status $st): $(tail -5 "$T/other.err")"
! as_other python3 -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1], timeout=120).read()' "$vnc" 2>/dev/null ||
	fail "uid 65534 loaded the noVNC page"
n=$(grep -c 'refused a connection of uid 65534' "$MVM_STATE_DIR/web/relay.log" || true)
[ "$n" -ge 2 ] || fail "relay.log does not show uid 65534 refused ($n): $(tail -3 "$MVM_STATE_DIR/web/relay.log"); client: $(tail -2 "$T/other.err")"
cdp_check pages "$cdp" > "$T/pages.json" || cdp_fail "puppeteer (the owner) after uid 65534 tried"

# Not allowlisted: the name does not resolve, and the attempt is an event.
step "puppeteer: blocked.test"
cdp_check blocked "$cdp" "http://blocked.test:8080/hello.txt" > "$T/blocked.json" || cdp_fail "puppeteer: blocked"
expect_match "blocked.test fails" 'ERR_NAME_NOT_RESOLVED' "$(jget "$(cat "$T/blocked.json")" error)"
"$MVM" events web > "$T/events" 2>&1
grep -q 'blocked.test' "$T/events" || fail "blocked.test not in mvm events: $(tail -5 "$T/events")"

# The host's loopback: neither the guest's own 127.0.0.1 nor the gateway leads there.
for url in http://127.0.0.1:18555/secret.txt http://10.0.2.2:18555/secret.txt; do
	cdp_check blocked "$cdp" "$url" > "$T/loop.json" || cdp_fail "puppeteer: $url"
	! grep -q 'host-loopback-secret' "$T/loop.json" || fail "the browser read the host's loopback via $url"
	[ "$(jget "$(cat "$T/loop.json")" error)" != None ] || fail "$url loaded"
done

# Inside the guest nothing checks websockify's port: a page from a site the
# sandbox may visit must still not reach the guest's own 127.0.0.1:6080
# (Chromium refuses a public page's WebSocket to loopback), while a page
# served from the guest's loopback does (so the probe can tell).
step "a page in the sandbox -> the guest's noVNC"
cdp_check wsprobe "$cdp" "http://allowed.test:8080/hello.txt" ws://127.0.0.1:6080/websockify > "$T/wsp.json" ||
	cdp_fail "puppeteer: wsprobe"
got=$(jget "$(cat "$T/wsp.json")" got)
case $got in open:*) fail "a page from allowed.test reaches the guest's noVNC: $got" ;; esac
cdp_check wsprobe "$cdp" "http://127.0.0.1:6080/vnc.html" ws://127.0.0.1:6080/websockify > "$T/wsp.json" ||
	cdp_fail "puppeteer: wsprobe (loopback page)"
expect_match "a loopback page reaches noVNC (the probe works)" '^open:RFB 003' "$(jget "$(cat "$T/wsp.json")" got)"

# Host loopback only: no other address of the host (the veth's 198.51.100.1) answers.
! python3 -c 'import socket,sys; socket.create_connection(("198.51.100.1", int(sys.argv[1])), timeout=5)' "$port" 2>/dev/null ||
	fail "the CDP endpoint answers on 198.51.100.1"

# Chromium's own sandbox, as the unprivileged user.
"$MVM" exec web -- ps -eo user:16,args > "$T/ps" || fail "ps in the guest"
grep -q '^browser .*chrom.*--type=renderer' "$T/ps" || fail "no renderer as user browser: $(grep chrom "$T/ps" | head -3)"
! grep -q -- '--no-sandbox' "$T/ps" || fail "Chromium runs with --no-sandbox"
! grep -q '^root .*chrom' "$T/ps" || fail "a Chromium process runs as root"

# mvm screenshot: a PNG of the display's size, not blank.
step "mvm screenshot"
t0=$(date +%s%N)
run_mvm screenshot web "$T/shot.png"
expect_eq "mvm screenshot" 0 "$rc"
echo "browser: mvm screenshot took $(( ($(date +%s%N) - t0) / 1000000 )) ms" >&2
python3 - "$T/shot.png" "$(jget "$form" screen 0)" "$(jget "$form" screen 1)" <<'PY' || fail "screenshot content"
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n"
w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", b[16:29])
assert (w, h) == (int(sys.argv[2]), int(sys.argv[3])), ((w, h), sys.argv[2:])
assert depth == 8 and ctype in (2, 6) and inter == 0, (depth, ctype, inter)
idat, i = b"", 8
while i < len(b):
    n, t = struct.unpack(">I4s", b[i:i + 8]); idat += b[i + 8:i + 8 + n] if t == b"IDAT" else b""; i += 12 + n
raw, bpp = zlib.decompress(idat), 3 if ctype == 2 else 4
stride, prev, rows = w * bpp, bytearray(w * bpp), []
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0; up = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + up) & 255
        elif f == 3: line[x] = (line[x] + (a + up) // 2) & 255
        elif f == 4:
            p = a + up - c; pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
    rows.append(line); prev = line
px = [tuple(r[x:x + 3]) for r in rows[::8] for x in range(0, stride, bpp * 8)]
colours = len(set(px))
mean = sum(sum(p) for p in px) / len(px) / 3
var = sum((sum(p) / 3 - mean) ** 2 for p in px) / len(px)
assert colours >= 4 and var > 100, ("blank frame?", colours, var)
print("screenshot %dx%d, %d colours, variance %.0f" % (w, h, colours, var), file=sys.stderr)
PY

# Checkpoint with the answer page open; close it; roll back. An open CDP
# connection is dropped by the rollback (its vsock stream is reset); a new one
# finds the page as it was at the checkpoint.
step "checkpoint"
tag=$("$MVM" checkpoint web) || fail "checkpoint"
step "close the page"
cdp_check close "$cdp" > "$T/close.json" || cdp_fail "puppeteer: close"
cdp_check pages "$cdp" > "$T/pages.json" || cdp_fail "puppeteer: pages after close"
! grep -q '"answer":"hello mvm-agent"' "$T/pages.json" || fail "the answer page did not close"
node "$BC/cdp-check.mjs" hold "$cdp" > "$T/hold.out" 2>"$T/hold.err" &
hold=$!
i=0
until grep -q connected "$T/hold.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 1200 ] || fail "the holding client did not connect"; sleep 0.2
done
step "rollback"
run_mvm rollback web "$tag"
expect_eq "rollback" 0 "$rc"
wait $hold || fail "holding client: $(cat "$T/hold.err")"
expect_match "an open CDP connection is dropped by the rollback" '"disconnected":true' "$(tail -1 "$T/hold.out")"
step "mvm browser after the rollback"
run_mvm browser web
[ "$rc" = 0 ] || cdp_fail "mvm browser after rollback: status $rc"
expect_eq "same endpoint after rollback" "$cdp" "$(cat "$T/out")"
cdp_check pages "$cdp" > "$T/pages.json" || cdp_fail "puppeteer: pages after rollback"
grep -q '"answer":"hello mvm-agent"' "$T/pages.json" || fail "the answer page did not come back: $(cat "$T/pages.json")"

# The browser template: Chromium is up and idle in web.
export MVM_TEMPLATE_DIR="$T/templates"
starts() { "$MVM" exec "$1" -- grep -c 'starting chromium' /var/log/mvm-browser.log; }
n_web=$(starts web) || fail "exec web"
# As `make template-browser` makes it, from the running web (idle: at most 30 s).
step "template-browser.sh --from web"
t0=$(date +%s)
MVM="$MVM" MVM_TEMPLATE_IDLE=30 tools/template-browser.sh --from web browser > "$T/tpl.out" 2>&1 ||
	cdp_fail "template-browser.sh: $(tail -5 "$T/tpl.out")"
sed 's/^/  /' "$T/tpl.out" >&2
step "template made in $(( $(date +%s) - t0 )) s"
SANDBOXES="$SANDBOXES web2"
step "create web2 --template browser"
t0=$(date +%s%N)
run_mvm create web2 --template browser $NET_DNS --allow allowed.test:8080/tcp
[ "$rc" = 0 ] || fail "create web2 --template browser: $(cat "$T/err")"
t1=$(date +%s%N)
run_mvm browser --json web2
[ "$rc" = 0 ] || fail "mvm browser web2: status $rc: $(cat "$T/err")"
t2=$(date +%s%N)
step "web2: create $(( (t1 - t0) / 1000000 )) ms, then mvm browser $(( (t2 - t1) / 1000000 )) ms"
cdp2=$(jget "$(cat "$T/out")" cdp)
expect_match "web2's own endpoint" '^http://127\.0\.0\.1:[0-9]+$' "$cdp2"
[ "$cdp2" != "$cdp" ] || fail "web2 answers on web's endpoint $cdp"
# The Chromium that was running (started before the template), not a new one.
expect_eq "web2 runs the template's Chromium (no new start)" "$n_web" "$(starts web2)"
run_mvm exec web2 -- hostname
expect_eq "web2's own hostname" "web2" "$(cat "$T/out")"
step "puppeteer: pages of web2"
cdp_check pages "$cdp2" > "$T/pages2.json" || fail "puppeteer: pages of web2"
grep -q '"answer":"hello mvm-agent"' "$T/pages2.json" || fail "web2 lacks the template's page: $(cat "$T/pages2.json")"
step "done"
echo "ok"
