# cdp_nav.py URL... (run inside the browser image's guest by
# tests/integration/browser-image.sh): opens a new tab through Chromium's
# DevTools on 127.0.0.1:9222 and navigates it to each URL in turn; prints
# one line per URL: "ok TEXT" (the page's text once its load event fired)
# or "error ERRORTEXT" (Page.navigate's own error, e.g.
# net::ERR_NAME_NOT_RESOLVED). Waits on CDP events, never on a clock, up
# to CDP_TIMEOUT seconds in all: a navigation to another site may start a
# new renderer, which takes long under emulation.
# Standard library only: a minimal WebSocket client (text frames, no
# fragmentation, which is all CDP sends for these short messages).
import base64, json, os, socket, struct, sys, time, urllib.request

BASE = "http://127.0.0.1:9222"
DEADLINE = time.time() + float(os.environ.get("CDP_TIMEOUT", "300"))


def ws_connect(url):
    path = url.split("9222", 1)[1]
    s = socket.create_connection(("127.0.0.1", 9222), timeout=60)
    s.settimeout(max(1.0, DEADLINE - time.time()))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:9222\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n" % (path, key)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            raise SystemExit("websocket handshake: connection closed")
        head += chunk
    if b" 101 " not in head.split(b"\r\n", 1)[0]:
        raise SystemExit("websocket handshake refused: %r" % head[:80])
    return s


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise SystemExit("websocket closed")
        data += chunk
    return data


def ws_send(s, obj):
    payload = json.dumps(obj).encode()
    n = len(payload)
    head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                            bytes([0x80 | 126]) + struct.pack(">H", n))
    mask = os.urandom(4)
    s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def ws_recv(s):
    b0, b1 = recv_exact(s, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack(">H", recv_exact(s, 2))[0]
    elif n == 127:
        n = struct.unpack(">Q", recv_exact(s, 8))[0]
    return json.loads(recv_exact(s, n)) if b0 & 0x0F == 1 else {}


next_id = 0
events = []


def call(s, method, **params):
    global next_id
    next_id += 1
    ws_send(s, {"id": next_id, "method": method, "params": params})
    while True:
        msg = ws_recv(s)
        if msg.get("id") == next_id:
            if "error" in msg:
                raise SystemExit("%s: %s" % (method, msg["error"]))
            return msg["result"]
        if "method" in msg:
            events.append(msg["method"])


def wait_event(s, method):
    while method not in events:
        msg = ws_recv(s)
        if "method" in msg:
            events.append(msg["method"])


def evaluate(s, expr):
    return call(s, "Runtime.evaluate", expression=expr, returnByValue=True)["result"].get("value")


def main():
    global sock
    req = urllib.request.Request(BASE + "/json/new?about:blank", method="PUT")
    target = json.load(urllib.request.urlopen(req, timeout=120))
    sock = ws_connect(target["webSocketDebuggerUrl"])
    call(sock, "Page.enable")
    call(sock, "Inspector.enable")
    for url in sys.argv[1:]:
        del events[:]
        res = call(sock, "Page.navigate", url=url)
        if res.get("errorText"):
            print("error", res["errorText"], flush=True)
            continue
        # (a late load event of the page before does not count)
        while True:
            wait_event(sock, "Page.loadEventFired")
            del events[:]
            if evaluate(sock, "location.href + ' ' + document.readyState") == url + " complete":
                break
        print("ok", evaluate(sock, "document.body.innerText").strip(), flush=True)


try:
    main()
except (TimeoutError, socket.timeout):
    # What the page said before it went quiet (e.g. Inspector.targetCrashed).
    raise SystemExit("cdp_nav: no answer in time; events seen: %s" % (events or "none"))
