"""``Sandbox``: one mvm microVM, E2B-style."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from . import _cli, _state
from . import _transport as _transport_mod
from ._transport import Transport
from .commands import Commands
from .errors import ApiError, SandboxError, SandboxNotFound
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
    """A running mvm sandbox. Use ``Sandbox.create()`` or ``Sandbox.connect()``.

    Every call goes through the sandbox's transport: this host's mvm (local
    mode) or ``mvm serve`` over HTTP(S) (remote mode: ``api_url``/``api_key``,
    or MVM_API_URL/MVM_API_KEY; sdk/python/README.md)."""

    def __init__(self, name: str, request_timeout: float = REQUEST_TIMEOUT,
                 _transport: Optional[Transport] = None) -> None:
        self.name = name
        self.sandbox_id = name      # E2B's name for it
        self.request_timeout = request_timeout
        self._t: Transport = _transport if _transport is not None else _transport_mod.pick()
        self.commands = Commands(self)
        self.files = Files(self)
        self.network = Network(self)
        self._reaper: Optional[subprocess.Popen] = None

    @property
    def remote(self) -> bool:
        """True when the calls go through ``mvm serve``."""
        return self._t.remote

    # -- lifecycle ---------------------------------------------------------
    @classmethod
    def create(cls, image: Optional[str] = None, template: Optional[str] = None, cpus: Optional[int] = None,
               memory: Union[str, int, None] = None, env: Optional[dict[str, str]] = None,
               allow: Optional[list[str]] = None, net: Optional[str] = None,
               copy: Optional[list[Union[str, tuple[str, str]]]] = None, name: Optional[str] = None,
               timeout: Optional[float] = None, request_timeout: float = REQUEST_TIMEOUT,
               boot_timeout: float = LIFECYCLE_TIMEOUT, api_url: Optional[str] = None,
               api_key: Optional[str] = None, ca_file: Optional[str] = None) -> "Sandbox":
        """Create and boot a sandbox (``mvm create``, or POST /v1/sandboxes remotely).

        @template is E2B's word for @image. @memory: "512M", "2G" or MiB as int.
        @allow: network allow rules; @net: "allowlist" (default: only @allow),
        "open" or "none". @copy: "HOST:GUEST" strings or (host, guest) pairs,
        recorded as the baseline of diff()/promote(). @timeout: the sandbox's
        lifetime in seconds (None: until kill()), enforced by a watchdog
        process that outlives this one. @api_url/@api_key/@ca_file: remote
        mode through ``mvm serve`` (default: $MVM_API_URL, $MVM_API_KEY,
        $MVM_API_CA); there each @copy goes as serve's workspace (a tar of
        the host directory), @timeout and net="open" raise NotSupportedError,
        and a sandbox without allow rules has no network device.
        """
        if image and template and image != template:
            raise ValueError("give image or template, not both")
        name = name or "sb-" + secrets.token_hex(4)
        if not _state.name_ok(name):
            raise ValueError(f"not a sandbox name: {name!r} (letters, digits, '.', '_', '-'; at most 63)")
        for k, v in (env or {}).items():
            if not str(k) or "=" in str(k) or "\0" in str(k) or "\0" in str(v):
                raise ValueError(f"bad environment variable {k!r}: empty name, '=' in the name, or a NUL byte")
        t = _transport_mod.pick(api_url, api_key, ca_file)
        if timeout:
            t.local_only("Sandbox.create(timeout=...) (a lifetime)")
        t.create(name, image or template, cpus, memory, dict(env or {}), allow, net, copy, boot_timeout)
        sb = cls(name, request_timeout, t)
        if timeout:
            sb.set_timeout(timeout)
        return sb

    @classmethod
    def connect(cls, name: str, request_timeout: float = REQUEST_TIMEOUT, api_url: Optional[str] = None,
                api_key: Optional[str] = None, ca_file: Optional[str] = None) -> "Sandbox":
        """The existing sandbox @name. Raises SandboxNotFound."""
        t = _transport_mod.pick(api_url, api_key, ca_file)
        if not _state.name_ok(name) or not t.exists(name, request_timeout):
            raise SandboxNotFound(f"no sandbox named {name}")
        return cls(name, request_timeout, t)

    @staticmethod
    def list(api_url: Optional[str] = None, api_key: Optional[str] = None,
             ca_file: Optional[str] = None) -> list[SandboxInfo]:
        """Every sandbox with its status (``mvm ls --json``; remotely, this API key's only)."""
        rows = _transport_mod.pick(api_url, api_key, ca_file).list(REQUEST_TIMEOUT)
        return [SandboxInfo(str(r["name"]), str(r["status"]), int(r.get("cpus", 0)), int(r.get("memory", 0)),
                            str(r.get("image", "")), int(r.get("pid", 0)), float(r.get("created", 0)))
                for r in rows]

    def kill(self) -> None:
        """Stop the sandbox and delete its state (``mvm rm -f``). Idempotent."""
        if self._reaper:
            self._reaper.kill()
            self._reaper.wait()
            self._reaper = None
        self._t.remove(self.name, LIFECYCLE_TIMEOUT)

    def is_running(self) -> bool:
        try:
            return self._t.status(self.name, self.request_timeout) == "running"
        except SandboxNotFound:
            return False
        except ApiError as e:
            if e.status in (401, 403, 429):
                raise   # the key or its quota, not the sandbox
            return False
        except SandboxError:
            if self._t.remote:
                raise   # mvm serve unreachable: that says nothing of the sandbox
            return False

    def set_timeout(self, timeout: float) -> None:
        """The sandbox is removed @timeout seconds from now (replaces an earlier timeout)."""
        self._t.local_only("set_timeout() (a lifetime)")
        if self._reaper:
            self._reaper.kill()
            self._reaper.wait()
        created = _state.config(self.name).get("created", 0)
        self._reaper = _spawn_reaper(self.name, float(timeout), str(created))

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    # -- checkpoints and snapshots -----------------------------------------
    def checkpoint(self, tag: Optional[str] = None) -> str:
        """Checkpoint memory, vCPUs, devices and disk; returns the tag (default cpN)."""
        return self._t.checkpoint(self.name, tag, max(self.request_timeout, SNAP_TIMEOUT))

    def rollback(self, tag: str) -> None:
        """Return to checkpoint @tag; then the guest clock is stepped and its RNG reseeded."""
        self._t.rollback(self.name, tag, max(self.request_timeout, SNAP_TIMEOUT))

    def checkpoints(self) -> list[dict[str, Any]]:
        return self._t.checkpoints(self.name, self.request_timeout)

    def fork(self, name: str) -> "Sandbox":
        """A running copy of this sandbox named @name (``mvm fork``)."""
        self._t.fork(self.name, name, LIFECYCLE_TIMEOUT)
        return Sandbox(name, self.request_timeout, self._t)

    def snapshot(self, dir: str) -> None:
        """A self-contained snapshot in @dir (new or empty) (``mvm snapshot``)."""
        self._t.local_only("snapshot() (a host directory)")
        _cli.run(["snapshot", self.name, dir], LIFECYCLE_TIMEOUT, self.name)

    @classmethod
    def restore(cls, dir: str, name: str, request_timeout: float = REQUEST_TIMEOUT) -> "Sandbox":
        """A new sandbox @name running from the snapshot in @dir (``mvm restore``; local mode)."""
        t = _transport_mod.pick()
        t.local_only("Sandbox.restore() (a host directory)")
        _cli.run(["restore", dir, name], LIFECYCLE_TIMEOUT)
        return cls(name, request_timeout, t)

    # -- review --------------------------------------------------------------
    def events(self) -> list[dict[str, Any]]:
        """Lifecycle events and network denials (``mvm events --json``)."""
        return self._t.events(self.name, REQUEST_TIMEOUT)

    def diff(self, path: Optional[str] = None) -> str:
        """The changes to the --copy tree (or below @path in it) as a git-style patch."""
        return self._t.diff(self.name, path, LIFECYCLE_TIMEOUT)

    def export(self, guest_path: str, host_dir: str) -> None:
        """Copy @guest_path out into the new host directory @host_dir (``mvm export``)."""
        self._t.export(self.name, guest_path, host_dir, LIFECYCLE_TIMEOUT)

    def promote(self, checks: Optional[list[str]] = None, out: str = "", workspace: Optional[str] = None,
                check_timeout: Optional[int] = None) -> PromoteReport:
        """Run @checks in the sandbox, then write the review bundle to @out (must not exist)."""
        if not out:
            raise ValueError("promote needs out=DIR")
        report = self._t.promote(self.name, list(checks or []), out, workspace, check_timeout)
        return PromoteReport(out, bool(report.get("checks_passed")), os.path.join(out, "changes.patch"), report)

    def __repr__(self) -> str:
        return f"Sandbox(name={self.name!r}{', remote' if self._t.remote else ''})"


def _pkg_parent() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# The watchdog in isolated mode (-I: no current directory, no PYTHON*
# variables, no user site on sys.path) started in /: `python -m` would put
# the caller's working directory first on sys.path, and any json.py or mvm/
# there would run as the reaper. Only this package's own directory is added.
_REAPER_BOOT = "import sys; sys.path.insert(0, sys.argv.pop(1)); from mvm._reaper import main; sys.exit(main())"


def _spawn_reaper(name: str, timeout: float, created: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-I", "-c", _REAPER_BOOT, _pkg_parent(), name, str(timeout), created, _cli.binary()],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, cwd="/")
