"""The sandbox's JSON control API on api.sock (docs/api.md)."""
from __future__ import annotations

import json
from typing import Any

from ._state import connect_unix
from .errors import SandboxError, SandboxNotFound

MAX_REPLY = 16 << 20


class Refused(SandboxError):
    """The VMM answered ok:false."""


def call(name: str, request: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One request line, one reply line. Raises if the VMM is not running or says ok:false."""
    line = json.dumps(request, separators=(",", ":")).encode() + b"\n"
    if len(line) > 4096:
        raise ValueError("control API requests are at most 4 KiB")
    try:
        s = connect_unix(name, "api.sock", timeout)
    except (FileNotFoundError, ConnectionRefusedError):
        raise SandboxError(f"sandbox {name} is not running") from None
    with s:
        s.sendall(line)
        buf = bytearray()
        while b"\n" not in buf and len(buf) < MAX_REPLY:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    try:
        reply = json.loads(bytes(buf).split(b"\n", 1)[0])
    except ValueError:
        raise SandboxError(f"sandbox {name}: malformed reply from the VMM") from None
    if not isinstance(reply, dict):
        raise SandboxError(f"sandbox {name}: malformed reply from the VMM")
    if reply.get("ok") is not True:
        raise Refused(str(reply.get("error", "the VMM refused")))
    return reply


__all__ = ["call", "Refused", "SandboxNotFound"]
