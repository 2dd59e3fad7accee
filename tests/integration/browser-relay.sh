#!/bin/sh
# `mvm browser` / `mvm screenshot` and the loopback relay, against stand-in
# guest programs in the default (busybox) guest, with --net none: the
# endpoint is reached over vsock only, listens on host 127.0.0.1 only, moves
# bytes exactly, takes nothing unchecked from the guest (a forged
# webSocketDebuggerUrl, a non-PNG, an oversized screenshot), and the relay
# process is confined (its state directory is its whole file system, no
# capability) and goes away with mvm stop, with the VMM, and rm. Another
# local user (nobody) is served nothing; noVNC's forward carries one request
# per connection unless it is a WebSocket.
# The real Chromium is tests/integration/browser-cdp.sh.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

sb_create br --net none --memory 256M
# running PID: alive and not a zombie (the box's init may reap late).
running() { [ -e "/proc/$1" ] && ! grep -q ') Z ' "/proc/$1/stat" 2>/dev/null; }

# The stand-ins: "CDP" is busybox httpd serving /json/version on 9222, the
# "noVNC" port 6080 echoes bytes back (nc -e cat); /srv/mode picks hostile
# answers.
cat > "$T/start" <<'SH'
#!/bin/sh
mkdir -p /srv/cdp/json
url='ws://127.0.0.1:9222/devtools/browser/0f6c2a8e-1b7d-4c59-9a0e-5d2b6e7f8a91'
[ "$(cat /srv/mode 2>/dev/null)" != forged ] || url='ws://evil.example:1/devtools/browser/x/../y'
printf '{"Browser":"stand-in/1.0","webSocketDebuggerUrl":"%s"}' "$url" > /srv/cdp/json/version
if [ ! -f /srv/started ]; then
	busybox httpd -p 127.0.0.1:9222 -h /srv/cdp
	busybox nc -ll -p 6080 -e cat </dev/null >/dev/null 2>&1 &
	touch /srv/started
fi
echo "stand-in display stack up" >&2
echo '{"cdp_port":9222,"vnc_port":6080,"display":":99","headless":false}'
SH
cat > "$T/shot" <<'SH'
#!/bin/sh
case "$(cat /srv/mode 2>/dev/null)" in
garbage) echo "this is not a png" ;;
huge) head -c 40000000 /dev/zero ;;
fail) echo "no display" >&2; exit 3 ;;
*) cat /srv/shot.png ;;
esac
SH
# A 64x48 RGB PNG with a gradient (pixel variance), made here, checked by the host.
python3 - "$T/shot.png" <<'PY'
import struct, sys, zlib
w, h = 64, 48
raw = b"".join(b"\0" + b"".join(bytes((x * 4, y * 5, (x * y) % 256)) for x in range(w))
              for y in range(h))
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + \
      chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
# install: the guest's root is its initramfs, so again after every boot.
install() {
	for f in start shot shot.png; do
		"$MVM" exec -i br -- sh -c "mkdir -p /usr/local/bin /srv && cat > /srv/$f" < "$T/$f" ||
			fail "copy $f in"
	done
	"$MVM" exec br -- sh -c 'mv /srv/start /usr/local/bin/mvm-browser-start &&
		mv /srv/shot /usr/local/bin/mvm-screenshot && chmod 755 /usr/local/bin/*' ||
		fail "install the stand-ins"
}
install

# --- the endpoint ---
run_mvm browser br
expect_eq "mvm browser" 0 "$rc"
cdp=$(cat "$T/out")
expect_match "endpoint" '^http://127\.0\.0\.1:[0-9]+$' "$cdp"
port=${cdp##*:}
run_mvm browser --json br
expect_eq "mvm browser --json" 0 "$rc"
python3 - "$T/out" "$port" <<'PY' || fail "browser --json: $(cat "$T/out")"
import json, sys
o = json.load(open(sys.argv[1]))
p = sys.argv[2]
assert o["cdp"] == "http://127.0.0.1:" + p, o
assert o["ws"] == "ws://127.0.0.1:%s/devtools/browser/0f6c2a8e-1b7d-4c59-9a0e-5d2b6e7f8a91" % p, o
assert o["vnc"].startswith("http://127.0.0.1:") and o["vnc"].endswith("/vnc.html"), o
assert o["vnc"] != "http://127.0.0.1:%s/vnc.html" % p, o
PY
expect_eq "the same relay is reused" "$cdp" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cdp"])' "$T/out")"
vnc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vnc"].split(":")[2].split("/")[0])' "$T/out")

# Through the relay: an HTTP request to the guest's loopback, and 4 MiB both
# ways through the echo, byte for byte, with half-close; 4 at once (after a
# WebSocket handshake naming the port, which noVNC's forward wants first).
python3 - "$port" "$vnc" <<'PY' || fail "bytes through the relay"
import socket, sys, threading, hashlib, os
cdp, vnc = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", cdp), timeout=60)
s.sendall(b"GET /json/version HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
r = b""
while True:
    d = s.recv(65536)
    if not d: break
    r += d
assert b"stand-in/1.0" in r, r
errors = []
def echo(i):
    try:
        data = (b"GET /websockify HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: http://127.0.0.1:%d\r\n"
                b"Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n" % (vnc, vnc)) + os.urandom(4 << 20)
        c = socket.create_connection(("127.0.0.1", vnc), timeout=120)
        t = threading.Thread(target=lambda: (c.sendall(data), c.shutdown(socket.SHUT_WR)))
        t.start()
        got = bytearray()
        while True:
            d = c.recv(1 << 16)
            if not d: break
            got += d
        t.join()
        if hashlib.sha256(got).digest() != hashlib.sha256(data).digest():
            errors.append("conn %d: %d bytes back of %d" % (i, len(got), len(data)))
    except Exception as e:
        errors.append("conn %d: %r" % (i, e))
ts = [threading.Thread(target=echo, args=(i,)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
assert not errors, errors
PY

# A web page in the user's browser: neither a WebSocket from another Origin
# nor a DNS-rebound request (its own name as Host) reaches the guest's noVNC
# port (the echo would send it back); the relay answers 403. The user's own
# browser on 127.0.0.1 or localhost and clients without Origin pass.
python3 tests/integration/origin_probe.py "$vnc" > "$T/probe" 2>&1 <<'CASES' || fail "noVNC forward: $(grep -v '^ok' "$T/probe")"
ws /websockify 127.0.0.1:{p} http://evil.example refused
ws /websockify 127.0.0.1:{p} null refused
ws /websockify evil.example:{p} http://evil.example:{p} refused
get /vnc.html evil.example:{p} - refused
ws /websockify - - refused
ws /websockify 127.0.0.1:{p} http://127.0.0.1:{p} echo
ws /websockify localhost:{p} http://localhost:{p} echo
ws /websockify 127.0.0.1:{p} - echo
CASES
grep -q 'port [0-9]*: refused a request with an Origin that is not' "$MVM_STATE_DIR/br/relay.log" ||
	fail "relay.log does not say why it refused: $(tail -3 "$MVM_STATE_DIR/br/relay.log")"

# A kept-alive connection on noVNC's forward: the second request (a rebound
# Host) never reaches the guest; the echo sends back the first alone.
python3 - "$vnc" <<'PY' || fail "noVNC forward: a second request on one connection went through"
import socket, sys
p = int(sys.argv[1])
first = b"GET /vnc.html HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: keep-alive\r\n\r\n" % p
second = b"GET /websockify HTTP/1.1\r\nHost: evil.example:%d\r\nUpgrade: websocket\r\n\r\n" % p
s = socket.create_connection(("127.0.0.1", p), timeout=120)
s.sendall(first + second)
got = b""
while True:
    d = s.recv(65536)
    if not d: break
    got += d
assert got == first, got
PY

# Another local user: the ports answer nobody's connections with nothing
# (closed at once, no slot taken), while the owner is served meanwhile.
cat > "$T/other.py" <<'PY'
import socket, sys
served = 0
socks = []
for port in map(int, sys.argv[1:]):
    for i in range(40):
        s = socket.create_connection(("127.0.0.1", port), timeout=120)
        socks.append(s)
        try:  # the relay may have closed it already
            s.sendall(b"GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
        except OSError:
            pass
for s in socks:
    try:
        served += len(s.recv(65536)) > 0
    except OSError:
        pass
print(served)
PY
chmod 644 "$T/other.py"; chmod 755 "$T"
got=$(setpriv --reuid=65534 --regid=65534 --clear-groups python3 "$T/other.py" "$port" "$vnc" 2>&1 || true)
expect_eq "connections of uid 65534 served" 0 "$got"
grep -q 'refused a connection of uid 65534' "$MVM_STATE_DIR/br/relay.log" ||
	fail "relay.log does not name the refused uid: $(tail -3 "$MVM_STATE_DIR/br/relay.log")"
python3 -c 'import sys, urllib.request; assert b"stand-in/1.0" in urllib.request.urlopen("http://127.0.0.1:%s/json/version" % sys.argv[1], timeout=120).read()' "$port" ||
	fail "the owner is not served after another user tried"

# Host loopback only: the listening sockets are bound to 127.0.0.1, and no
# other address of this host answers on the port.
for p in "$port" "$vnc"; do
	hex=$(printf '%04X' "$p")
	grep -q "^ *[0-9]*: 0100007F:$hex 00000000:0000 0A" /proc/net/tcp ||
		fail "port $p is not listening on 127.0.0.1 alone: $(grep ":$hex " /proc/net/tcp /proc/net/tcp6)"
	! grep -q ":$hex 0*:0000 0A" /proc/net/tcp6 || fail "port $p listens on IPv6"
done
for a in $(ip -o -4 addr show 2>/dev/null | awk '$4 !~ /^127\./ { sub("/.*", "", $4); print $4 }'); do
	! python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)' "$a" "$port" 2>/dev/null ||
		fail "the endpoint answers on $a"
done

# The relay: a process of its own, confined, with no VMM descriptor.
rpid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$MVM_STATE_DIR/br/relay.json")
expect_match "relay command line" '^mvm relay br ' "$(tr '\0' ' ' < /proc/$rpid/cmdline)"
expect_match "relay seccomp" 'Seccomp:[[:space:]]+2' "$(cat /proc/$rpid/status)"
expect_match "relay no_new_privs" 'NoNewPrivs:[[:space:]]+1' "$(cat /proc/$rpid/status)"
for set in CapInh CapPrm CapEff CapBnd CapAmb; do
	expect_match "relay $set" "^$set:[[:space:]]+0+\$" "$(grep "^$set:" /proc/$rpid/status)"
done
# Its state directory is all it sees: its own vsock.sock, no /tmp (where
# the other sandboxes' sockets and this test live), no /run.
[ -S "/proc/$rpid/root/vsock.sock" ] || fail "the relay does not see its own vsock.sock"
for p in tmp run "$MVM_STATE_DIR"; do
	[ ! -e "/proc/$rpid/root/${p#/}" ] || fail "the relay sees /${p#/}"
done
! ls -l /proc/$rpid/fd | grep -q 'kvm' || fail "the relay holds a KVM descriptor"

# --- screenshot ---
run_mvm screenshot br "$T/out.png"
expect_eq "mvm screenshot" 0 "$rc"
cmp -s "$T/out.png" "$T/shot.png" || fail "the screenshot is not the guest's PNG"
for mode in garbage huge fail; do
	"$MVM" exec br -- sh -c "echo $mode > /srv/mode"
	run_mvm screenshot br "$T/bad.png"
	[ "$rc" != 0 ] || fail "screenshot ($mode) succeeded"
	[ ! -e "$T/bad.png" ] || fail "screenshot ($mode) left a file"
	! ls "$T" | grep -q 'bad.png.tmp' || fail "screenshot ($mode) left a temporary file"
	case $mode in
	garbage) expect_match "not a PNG" 'not a valid PNG' "$(cat "$T/err")" ;;
	huge) expect_match "oversized screenshot" 'exceeds 32 MiB' "$(cat "$T/err")" ;;
	fail) expect_match "failing screenshot" 'status 3.*no display' "$(cat "$T/err")" ;;
	esac
done

# A forged webSocketDebuggerUrl is refused, not passed on.
"$MVM" exec br -- sh -c 'echo forged > /srv/mode'
run_mvm browser --json br
[ "$rc" != 0 ] || fail "a forged webSocketDebuggerUrl was accepted: $(cat "$T/out")"
expect_match "forged url" 'not a DevTools' "$(cat "$T/err")"
"$MVM" exec br -- sh -c 'rm /srv/mode'

# --- lifetime: mvm stop, the VMM's death, rm ---
"$MVM" stop br >/dev/null 2>&1 || fail "stop"
! running "$rpid" || fail "mvm stop left the relay running"
[ ! -e "$MVM_STATE_DIR/br/relay.json" ] || fail "mvm stop left relay.json"
"$MVM" start br >/dev/null 2>&1 || fail "start"
install
run_mvm browser br
expect_eq "mvm browser after a restart" 0 "$rc"
rpid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$MVM_STATE_DIR/br/relay.json")
kill -9 "$(cat "$MVM_STATE_DIR/br/pid")"
i=0
while running "$rpid" && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
! running "$rpid" || fail "the relay outlived its VMM"
"$MVM" start br >/dev/null 2>&1 || fail "start after kill"
install
run_mvm browser br
expect_eq "mvm browser after the VMM died" 0 "$rc"
rpid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$MVM_STATE_DIR/br/relay.json")
"$MVM" rm -f br >/dev/null 2>&1 || fail "rm -f"
! running "$rpid" || fail "mvm rm left the relay running"
echo "ok"
