"""The local transport: sandboxes on this host, through the ``mvm`` binary
(lifecycle), ``api.sock`` (control API) and ``vsock.sock`` (the agent)."""
from __future__ import annotations

import json
import os
from typing import Any, Optional

from . import _agent, _api, _cli, _state
from .errors import PolicyError, SandboxNotFound


class LocalTransport:
    remote = False

    def local_only(self, what: str) -> None:
        """Local mode does everything."""

    # -- lifecycle ------------------------------------------------------------
    def create(self, name: str, image: Optional[str], cpus: Optional[int], memory: Any,
               env: dict[str, str], allow: Optional[list[str]], net: Optional[str], copy: Any,
               timeout: float) -> None:
        args = ["create", name]
        if image:
            args += ["--image", str(image)]
        if cpus is not None:
            args += ["--cpus", str(int(cpus))]
        if memory is not None:
            args += ["--memory", str(memory)]
        env_fd = _env_fd(env)
        if env_fd >= 0:
            args += ["--env-fd", str(env_fd)]
        if net is not None:
            args += ["--net", net]
        for rule in allow or []:
            args += ["--allow", rule]
        for c in copy or []:
            args += ["--copy", c if isinstance(c, str) else f"{c[0]}:{c[1]}"]
        try:
            _cli.run(args, timeout, pass_fds=(env_fd,) if env_fd >= 0 else ())
        finally:
            if env_fd >= 0:
                os.close(env_fd)

    def exists(self, name: str, timeout: float) -> bool:
        return _state.exists(name)

    def list(self, timeout: float) -> list[dict[str, Any]]:
        return list(_cli.run_json(["ls", "--json"], timeout))

    def remove(self, name: str, timeout: float) -> None:
        if _state.exists(name):
            _cli.run(["rm", "-f", name], timeout)

    def status(self, name: str, timeout: float) -> str:
        return str(_api.call(name, {"op": "status"}, timeout).get("status", ""))

    # -- commands and files -----------------------------------------------------
    def exec(self, name: str, argv: list[str], envs: dict[str, str], cwd: Optional[str],
             timeout: Optional[float], stdin: Optional[bytes], keep_stdin_open: bool,
             request_timeout: float) -> "_agent.Exec":
        # create's env first, minus what the call overrides (as ``mvm exec -e``).
        base = [e for e in _state.config(name).get("env", []) if e.split("=", 1)[0] not in envs]
        env = base + [f"{k}={v}" for k, v in envs.items()]
        return _agent.Exec(name, argv, env, cwd or "", int((timeout or 0) * 1000),
                           stdin is not None or keep_stdin_open, request_timeout)

    def read_file(self, name: str, path: str, max_bytes: int, timeout: float) -> bytes:
        return _agent.get_file(name, path, timeout, max_bytes)

    def write_file(self, name: str, path: str, data: bytes, mode: int, timeout: float) -> None:
        _agent.put_file(name, path, data, mode, timeout)

    # -- checkpoints, copies, review ------------------------------------------
    def checkpoint(self, name: str, tag: Optional[str], timeout: float) -> str:
        req: dict[str, Any] = {"op": "checkpoint"}
        if tag:
            req["tag"] = tag
        return str(_api.call(name, req, timeout)["tag"])

    def rollback(self, name: str, tag: str, timeout: float) -> None:
        _api.call(name, {"op": "rollback", "tag": tag}, timeout)
        _agent.sync(name, min(timeout, 60.0))   # the guest's clock and entropy, as mvm rollback

    def checkpoints(self, name: str, timeout: float) -> list[dict[str, Any]]:
        return list(_api.call(name, {"op": "checkpoints"}, timeout)["checkpoints"])

    def fork(self, name: str, new: str, timeout: float) -> None:
        _cli.run(["fork", name, new], timeout, name)

    def events(self, name: str, timeout: float) -> list[dict[str, Any]]:
        text = _cli.run(["events", name, "--json"], timeout, name).strip()
        if text.startswith("["):
            return list(json.loads(text))
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- trees and results out --------------------------------------------------
    def write_tree(self, name: str, host_path: str, guest_dir: str, timeout: float) -> None:
        _agent.put_tree(name, host_path, guest_dir, timeout)

    def read_tree(self, name: str, guest_path: str, host_dir: str, timeout: Optional[float]) -> None:
        # mvm cp: a tree from the guest is hostile; its C receiver writes beneath @host_dir only.
        _cli.run(["cp", f"{name}:{guest_path}", host_dir], timeout, name)

    def diff(self, name: str, path: Optional[str], timeout: float) -> str:
        return _cli.run(["diff", name] + ([path] if path else []), timeout, name)

    def export(self, name: str, guest_path: str, host_dir: str, timeout: float) -> None:
        _cli.run(["export", name, guest_path, host_dir], timeout, name)

    def promote(self, name: str, checks: list[str], out: str, workspace: Optional[str],
                check_timeout: Optional[int]) -> dict[str, Any]:
        args = ["promote", "--out", out]
        for c in checks:
            args += ["--check", c]
        if workspace:
            args += ["--workspace", workspace]
        if check_timeout:
            args += ["--check-timeout", str(int(check_timeout))]
        _cli.run(args + [name], None, name, ok_codes=(0, 1))
        with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
            return dict(json.load(f))

    # -- network ----------------------------------------------------------------
    def net(self, name: str, verb: str, rule: str, timeout: float) -> dict[str, Any]:
        try:
            if verb == "show":
                return dict(_api.call(name, {"op": "net-show"}, timeout)["policy"])
            _api.call(name, {"op": "net-" + verb, "rule": rule}, timeout)
            return {}
        except _api.Refused as e:
            raise PolicyError(str(e)) from None


def _env_fd(env: dict[str, str]) -> int:
    """@env as NUL-ended K=V records in a memfd for ``mvm create --env-fd``: values
    never appear on a command line, which every local user can read. -1 if empty."""
    if not env:
        return -1
    data = bytearray()
    for k, v in env.items():
        k, v = str(k), str(v)
        if not k or "=" in k or "\0" in k or "\0" in v:
            raise ValueError(f"bad environment variable {k!r}: empty name, '=' in the name, or a NUL byte")
        data += f"{k}={v}".encode() + b"\0"
    fd = os.memfd_create("mvm-env", os.MFD_CLOEXEC)
    try:
        os.write(fd, bytes(data))
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


__all__ = ["LocalTransport", "SandboxNotFound"]
