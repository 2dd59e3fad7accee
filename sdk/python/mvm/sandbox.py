"""``Sandbox``: one mvm microVM, E2B-style."""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from . import _agent, _api, _cli, _state
from .commands import Commands
from .errors import SandboxError, SandboxNotFound
from .files import Files
from .network import Network

REQUEST_TIMEOUT = 60.0
LIFECYCLE_TIMEOUT = 900.0   # create/fork/restore boot under emulation can be slow
SNAP_TIMEOUT = 600.0


@dataclass
class SandboxInfo:
    """One row of ``Sandbox.list()``."""
    name: str
    status: str
    cpus: int = 0
    memory: int = 0
    image: str = ""
    pid: int = 0
    created: float = 0.0


@dataclass
class PromoteReport:
    """What ``sb.promote()`` wrote: the bundle directory and its report.json."""
    out: str
    checks_passed: bool
    patch_path: str
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def checks(self) -> list[dict[str, Any]]:
        return list(self.report.get("checks", []))

    @property
    def patch(self) -> str:
        with open(self.patch_path, encoding="utf-8", errors="replace") as f:
            return f.read()


class Sandbox:
    """A running mvm sandbox. Use ``Sandbox.create()`` or ``Sandbox.connect()``."""

    def __init__(self, name: str, request_timeout: float = REQUEST_TIMEOUT) -> None:
        self.name = name
        self.sandbox_id = name      # E2B's name for it
        self.request_timeout = request_timeout
        self.commands = Commands(self)
        self.files = Files(self)
        self.network = Network(self)
        self._reaper: Optional[subprocess.Popen] = None

    # -- lifecycle ---------------------------------------------------------
    @classmethod
    def create(cls, image: Optional[str] = None, template: Optional[str] = None, cpus: Optional[int] = None,
               memory: Union[str, int, None] = None, env: Optional[dict[str, str]] = None,
               allow: Optional[list[str]] = None, net: Optional[str] = None,
               copy: Optional[list[Union[str, tuple[str, str]]]] = None, name: Optional[str] = None,
               timeout: Optional[float] = None, request_timeout: float = REQUEST_TIMEOUT,
               boot_timeout: float = LIFECYCLE_TIMEOUT) -> "Sandbox":
        """Create and boot a sandbox (``mvm create``).

        @template is E2B's word for @image. @memory: "512M", "2G" or MiB as int.
        @allow: network allow rules; @net: "allowlist" (default: only @allow),
        "open" or "none". @copy: "HOST:GUEST" strings or (host, guest) pairs,
        recorded as the baseline of diff()/promote(). @timeout: the sandbox's
        lifetime in seconds (None: until kill()), enforced by a watchdog
        process that outlives this one.
        """
        if image and template and image != template:
            raise ValueError("give image or template, not both")
        name = name or "sb-" + secrets.token_hex(4)
        args = ["create", name]
        if image or template:
            args += ["--image", str(image or template)]
        if cpus is not None:
            args += ["--cpus", str(int(cpus))]
        if memory is not None:
            args += ["--memory", str(memory)]
        for k, v in (env or {}).items():
            args += ["--env", f"{k}={v}"]
        if net is not None:
            args += ["--net", net]
        for rule in allow or []:
            args += ["--allow", rule]
        for c in copy or []:
            args += ["--copy", c if isinstance(c, str) else f"{c[0]}:{c[1]}"]
        _cli.run(args, boot_timeout)
        sb = cls(name, request_timeout)
        if timeout:
            sb.set_timeout(timeout)
        return sb

    @classmethod
    def connect(cls, name: str, request_timeout: float = REQUEST_TIMEOUT) -> "Sandbox":
        """The existing sandbox @name. Raises SandboxNotFound."""
        if not _state.exists(name):
            raise SandboxNotFound(f"no sandbox named {name}")
        return cls(name, request_timeout)

    @staticmethod
    def list() -> list[SandboxInfo]:
        """Every sandbox with its status (``mvm ls --json``)."""
        rows = _cli.run_json(["ls", "--json"], REQUEST_TIMEOUT)
        return [SandboxInfo(r["name"], r["status"], int(r.get("cpus", 0)), int(r.get("memory", 0)),
                            r.get("image", ""), int(r.get("pid", 0)), float(r.get("created", 0)))
                for r in rows]

    def kill(self) -> None:
        """Stop the sandbox and delete its state (``mvm rm -f``). Idempotent."""
        if self._reaper:
            self._reaper.kill()
            self._reaper.wait()
            self._reaper = None
        if _state.exists(self.name):
            _cli.run(["rm", "-f", self.name], LIFECYCLE_TIMEOUT)

    def is_running(self) -> bool:
        try:
            return _api.call(self.name, {"op": "status"}, self.request_timeout).get("status") == "running"
        except SandboxError:
            return False

    def set_timeout(self, timeout: float) -> None:
        """The sandbox is removed @timeout seconds from now (replaces an earlier timeout)."""
        if self._reaper:
            self._reaper.kill()
            self._reaper.wait()
        created = _state.config(self.name).get("created", 0)
        self._reaper = subprocess.Popen(
            [sys.executable, "-m", "mvm._reaper", self.name, str(float(timeout)), str(created), _cli.binary()],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, env={**os.environ, "PYTHONPATH": _pkg_parent()})

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    # -- checkpoints and snapshots -----------------------------------------
    def checkpoint(self, tag: Optional[str] = None) -> str:
        """Checkpoint memory, vCPUs, devices and disk; returns the tag (default cpN)."""
        req: dict[str, Any] = {"op": "checkpoint"}
        if tag:
            req["tag"] = tag
        return str(_api.call(self.name, req, max(self.request_timeout, SNAP_TIMEOUT))["tag"])

    def rollback(self, tag: str) -> None:
        """Return to checkpoint @tag; then the guest clock is stepped and its RNG reseeded."""
        _api.call(self.name, {"op": "rollback", "tag": tag}, max(self.request_timeout, SNAP_TIMEOUT))
        _agent.sync(self.name, self.request_timeout)

    def checkpoints(self) -> list[dict[str, Any]]:
        return list(_api.call(self.name, {"op": "checkpoints"}, self.request_timeout)["checkpoints"])

    def fork(self, name: str) -> "Sandbox":
        """A running copy of this sandbox named @name (``mvm fork``)."""
        _cli.run(["fork", self.name, name], LIFECYCLE_TIMEOUT, self.name)
        return Sandbox(name, self.request_timeout)

    def snapshot(self, dir: str) -> None:
        """A self-contained snapshot in @dir (new or empty) (``mvm snapshot``)."""
        _cli.run(["snapshot", self.name, dir], LIFECYCLE_TIMEOUT, self.name)

    @classmethod
    def restore(cls, dir: str, name: str, request_timeout: float = REQUEST_TIMEOUT) -> "Sandbox":
        """A new sandbox @name running from the snapshot in @dir (``mvm restore``)."""
        _cli.run(["restore", dir, name], LIFECYCLE_TIMEOUT)
        return cls(name, request_timeout)

    # -- review --------------------------------------------------------------
    def events(self) -> list[dict[str, Any]]:
        """Lifecycle events and network denials (``mvm events --json``)."""
        text = _cli.run(["events", self.name, "--json"], REQUEST_TIMEOUT, self.name).strip()
        if text.startswith("["):
            return list(json.loads(text))
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def diff(self, path: Optional[str] = None) -> str:
        """The changes to the --copy tree (or below @path in it) as a git-style patch."""
        return _cli.run(["diff", self.name] + ([path] if path else []), LIFECYCLE_TIMEOUT, self.name)

    def export(self, guest_path: str, host_dir: str) -> None:
        """Copy @guest_path out into the new host directory @host_dir (``mvm export``)."""
        _cli.run(["export", self.name, guest_path, host_dir], LIFECYCLE_TIMEOUT, self.name)

    def promote(self, checks: Optional[list[str]] = None, out: str = "", workspace: Optional[str] = None,
                check_timeout: Optional[int] = None) -> PromoteReport:
        """Run @checks in the sandbox, then write the review bundle to @out (must not exist)."""
        if not out:
            raise ValueError("promote needs out=DIR")
        args = ["promote", "--out", out]
        for c in checks or []:
            args += ["--check", c]
        if workspace:
            args += ["--workspace", workspace]
        if check_timeout:
            args += ["--check-timeout", str(int(check_timeout))]
        _cli.run(args + [self.name], None, self.name, ok_codes=(0, 1))
        with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
            report = json.load(f)
        return PromoteReport(out, bool(report.get("checks_passed")), os.path.join(out, "changes.patch"), report)

    def __repr__(self) -> str:
        return f"Sandbox(name={self.name!r})"


def _pkg_parent() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
