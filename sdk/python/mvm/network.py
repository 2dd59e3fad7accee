"""``sb.network``: the running sandbox's allowlist (docs/network-policy.md)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _api
from .errors import PolicyError

if TYPE_CHECKING:
    from .sandbox import Sandbox


class Network:
    """Rules apply from the next frame and persist in policy.json."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def _call(self, req: dict[str, Any]) -> dict[str, Any]:
        try:
            return _api.call(self._sb.name, req, self._sb.request_timeout)
        except _api.Refused as e:
            raise PolicyError(str(e)) from None

    def allow(self, rule: str) -> None:
        """Allow HOST[:PORTS][/tcp|/udp] (a name, *.name, IP[/LEN], [IPv6], host-loopback)."""
        self._call({"op": "net-allow", "rule": rule})

    def deny(self, rule: str) -> None:
        """Deny a destination; established connections it now refuses are reset."""
        self._call({"op": "net-deny", "rule": rule})

    def remove(self, rule: str) -> None:
        """Remove the rule with exactly this text."""
        self._call({"op": "net-remove", "rule": rule})

    def show(self) -> dict[str, Any]:
        """The policy: ``{"mode": ..., "allow": [...], "deny": [...]}``."""
        return self._call({"op": "net-show"})["policy"]

    def check(self, dest: str) -> dict[str, Any]:
        """Dry run: ``{"allowed": bool, "why": str}`` for HOST:PORT/PROTO."""
        r = self._call({"op": "net-check", "dest": dest})
        return {"allowed": bool(r.get("allowed")), "why": r.get("why", "")}
