"""The guest agent's wire protocol (docs/agent-protocol.md): frames and payloads."""
from __future__ import annotations

import socket
import struct
from typing import Optional, Tuple

EXEC, STDIN, STDOUT, STDERR, EXIT, KILL, ERROR, RESIZE, WARN = 1, 2, 3, 4, 5, 6, 7, 8, 9
PUT, GET, ENTRY, DATA, END, OK, SHUTDOWN, PING, SYNC = 16, 17, 18, 19, 20, 21, 22, 23, 24
TYPE_MAX = 24
HDR = struct.Struct("<IHH")
MAX_PAYLOAD = 1 << 20
CHUNK = 64 << 10
EXEC_STDIN = 0x2
FILE, DIR, SYMLINK, SKIPPED = 1, 2, 3, 4
EXITED, SIGNALED = 0, 1


class ProtocolError(Exception):
    """The peer sent something the protocol does not allow."""


def put_str(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    if b"\0" in b:
        raise ValueError("strings sent to the agent cannot contain NUL")
    return struct.pack("<I", len(b)) + b


def frame(ftype: int, payload: bytes = b"") -> bytes:
    return HDR.pack(len(payload), ftype, 0) + payload


def encode_exec(argv: list[str], env: list[str], cwd: str, timeout_ms: int, flags: int, uid: int = 0) -> bytes:
    out = struct.pack("<IIIHH", flags, uid, timeout_ms, 0, 0) + put_str(cwd)
    out += struct.pack("<I", len(argv)) + b"".join(put_str(a) for a in argv)
    out += struct.pack("<I", len(env)) + b"".join(put_str(e) for e in env)
    if len(out) > MAX_PAYLOAD:
        raise ValueError("the command and environment exceed 1 MiB")
    return out


def decode_exit(p: bytes) -> Tuple[int, int, bool]:
    """(kind, code, timed_out) of an EXIT payload."""
    if len(p) != 12:
        raise ProtocolError("malformed EXIT frame")
    kind, code, timed_out = struct.unpack("<III", p)
    if kind > SIGNALED or code > 255 or timed_out > 1:
        raise ProtocolError("malformed EXIT frame")
    return kind, code, bool(timed_out)


class Reader:
    """Read whole frames from a socket, each checked as the protocol demands."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def _exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise ProtocolError("the agent closed the stream inside a frame")
            buf += chunk
        return bytes(buf)

    def read(self) -> Optional[Tuple[int, bytes]]:
        """The next (type, payload), or None at a clean end of stream."""
        first = self.sock.recv(HDR.size)
        if not first:
            return None
        hdr = first + (self._exact(HDR.size - len(first)) if len(first) < HDR.size else b"")
        length, ftype, flags = HDR.unpack(hdr)
        if flags or ftype == 0 or ftype > TYPE_MAX or length > MAX_PAYLOAD:
            raise ProtocolError("bad frame header from the agent")
        return ftype, self._exact(length) if length else b""


def decode_entry(p: bytes) -> Tuple[int, int, int, str, str]:
    """(kind, mode, size, path, target) of an ENTRY payload."""
    try:
        kind, mode, size = struct.unpack_from("<IIQ", p)
        off = 16
        (plen,) = struct.unpack_from("<I", p, off)
        path = p[off + 4:off + 4 + plen]
        off += 4 + plen
        (tlen,) = struct.unpack_from("<I", p, off)
        target = p[off + 4:off + 4 + tlen]
        if len(path) != plen or len(target) != tlen:
            raise ProtocolError("malformed ENTRY frame")
    except struct.error as e:
        raise ProtocolError("malformed ENTRY frame") from e
    return kind, mode & 0o7777, size, path.decode(errors="surrogateescape"), target.decode(errors="surrogateescape")


def encode_entry(kind: int, mode: int, size: int, path: str, target: str = "") -> bytes:
    return struct.pack("<IIQ", kind, mode & 0o7777, size) + put_str(path) + put_str(target)
