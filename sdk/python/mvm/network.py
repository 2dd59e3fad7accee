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

    def _call(self, verb: str, rule: str = "") -> dict[str, Any]:
        return self._sb._t.net(self._sb.name, verb, rule, self._sb.request_timeout)

    def allow(self, rule: str) -> None:
        """Allow HOST[:PORTS][/tcp|/udp] (a name, *.name, IP[/LEN], [IPv6], host-loopback)."""
        self._call("allow", rule)

    def deny(self, rule: str) -> None:
        """Deny a destination; established connections it now refuses are reset."""
        self._call("deny", rule)

    def remove(self, rule: str) -> None:
        """Remove the rule with exactly this text."""
        self._call("remove", rule)

    def show(self) -> dict[str, Any]:
        """The policy: ``{"mode": ..., "allow": [...], "deny": [...]}``."""
        return self._call("show")

    def check(self, dest: str) -> dict[str, Any]:
        """Dry run: ``{"allowed": bool, "why": str}`` for HOST:PORT/PROTO (local mode)."""
        self._sb._t.local_only("network.check()")
        try:
            r = _api.call(self._sb.name, {"op": "net-check", "dest": dest}, self._sb.request_timeout)
        except _api.Refused as e:
            raise PolicyError(str(e)) from None
        return {"allowed": bool(r.get("allowed")), "why": r.get("why", "")}
