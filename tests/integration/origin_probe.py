#!/usr/bin/env python3
"""origin_probe.py PORT < CASES: what a web page in the user's own browser
could send to a forwarded loopback port, and what comes back.

Each line of CASES: KIND PATH HOST ORIGIN EXPECT
  KIND    ws (a WebSocket handshake) or get (a plain GET)
  HOST    the Host header, ORIGIN the Origin header; "-" leaves it out;
          "{p}" stands for PORT (127.0.0.1:{p} is what the user's browser
          sends, evil.example:{p} what a DNS-rebound page sends)
  EXPECT  101 (handshake accepted), 200, refused (a 4xx/5xx answer),
          rfb (101, then a binary frame starting "RFB ": VNC behind it),
          echo (the request came back unchanged: a stand-in echo behind it)
One line per case on stdout; exit 1 if any case did not go as expected.
"""
import base64
import os
import socket
import sys

TIMEOUT = 120  # everything in the nested box is emulated and slow


def request(port, kind, path, host, origin):
    h = ["GET %s HTTP/1.1" % path]
    if host != "-":
        h.append("Host: " + host)
    if origin != "-":
        h.append("Origin: " + origin)
    if kind == "ws":
        h += ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
              "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode(),
              "Sec-WebSocket-Protocol: binary"]
    else:
        h.append("Connection: close")
    return ("\r\n".join(h) + "\r\n\r\n").encode()


def exchange(port, req, want_frame):
    """The reply's head (bytes up to the blank line, or all there is) and,
    when @want_frame, the payload of the first WebSocket frame after it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    s.sendall(req)
    got = b""
    while b"\r\n\r\n" not in got and len(got) < len(req) + 65536:
        d = s.recv(65536)
        if not d:
            break
        got += d
    head, _, rest = got.partition(b"\r\n\r\n")
    payload = b""
    if want_frame and head.startswith(b"HTTP/1.1 101"):
        while len(rest) < 2 or len(rest) < 2 + (rest[1] & 0x7f):
            d = s.recv(65536)
            if not d:
                break
            rest += d
        payload = rest[2:2 + (rest[1] & 0x7f)] if len(rest) >= 2 else b""
    s.close()
    return head, got, payload


def main():
    port = int(sys.argv[1])
    bad = 0
    for line in sys.stdin:
        if not line.strip() or line.startswith("#"):
            continue
        kind, path, host, origin, expect = line.replace("{p}", str(port)).split()
        req = request(port, kind, path, host, origin)
        try:
            head, got, payload = exchange(port, req, expect == "rfb")
            status = head.split(b"\r\n", 1)[0].decode("latin-1")
        except OSError as e:
            got, payload, status = b"", b"", "no answer (%s)" % e
        code = status.split(" ")[1] if status.startswith("HTTP/1.") and " " in status else ""
        ok = {"101": code == "101", "200": code == "200",
              "refused": code[:1] in ("4", "5"),
              "rfb": code == "101" and payload.startswith(b"RFB "),
              "echo": got == req}[expect]
        bad += not ok
        print("%s %s %s Host=%s Origin=%s: want %s, got %r%s" % (
            "ok  " if ok else "FAIL", kind, path, host, origin, expect, status,
            " then %r" % payload[:12] if payload else ""))
    sys.exit(1 if bad else 0)


main()
