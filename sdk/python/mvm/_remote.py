"""The remote transport: every SDK call as a request to ``mvm serve``
(docs/api.md, "HTTP API"). What serve does not offer raises
NotSupportedError naming the call; nothing here falls back to the host."""
from __future__ import annotations

import base64
import json
import math
import os
import socket
import urllib.parse
from typing import Any, Iterator, Optional

from . import _tar
from ._http import MAX_JSON, Client, LineReader
from .errors import (AgentError, ApiError, NotFoundError, NotSupportedError, PolicyError, SandboxError)

STREAM_IDLE = 60.0      # serve sends a heartbeat after 15 s of silence: four missed is a dead server
STDIN_MAX = 64 << 10    # serve's exec body takes stdin whole, as a string of at most this
KILLED = 128 + 9
MAX_TREE = 1 << 30      # a tree, patch or bundle kept in memory (serve's --max-file caps it first)
TAR = "application/x-tar"


def _p(name: str, sub: str = "") -> str:
    return "/v1/sandboxes/" + urllib.parse.quote(name, safe="") + sub


class RemoteExec:
    """One exec stream: its NDJSON lines as the SDK's events."""

    def __init__(self, client: Client, name: str, body: dict[str, Any], timeout: float) -> None:
        raw = json.dumps(body, separators=(",", ":")).encode()
        # serve answers the head once the agent took the command (it may wait
        # for a booting guest); then a line or a heartbeat at least every 15 s.
        wait = max(STREAM_IDLE, timeout)
        self._conn, self._resp = client.open("POST", _p(name, "/exec"), wait, raw)
        self._sock: Optional[socket.socket] = self._conn.sock
        self._lines = LineReader(self._resp, self._sock, wait)
        self._killed = False

    def events(self, deadline: Optional[float]) -> Iterator[tuple]:
        """("stdout"|"stderr", bytes) as they come, then ("exit", code, timed_out)."""
        try:
            for o in self._lines.objects(deadline, "command"):
                t = o.get("type")
                if t in ("stdout", "stderr"):
                    yield (t, _payload(o))
                elif t == "exit":
                    code, sig = o.get("exit_code"), o.get("signal")
                    if isinstance(sig, int) and not isinstance(sig, bool):
                        code = 128 + sig
                    if not isinstance(code, int) or isinstance(code, bool):
                        raise ApiError(200, "command: an exit line without a code")
                    yield ("exit", code, o.get("timed_out") is True)
                    return
                elif t == "error":
                    raise AgentError(str(o.get("error", "the run broke"))[:1024])
                elif t != "heartbeat":
                    raise ApiError(200, f"command: unknown stream line type {str(t)[:40]!r}")
        except SandboxError:
            if self._killed:
                yield ("exit", KILLED, False)
                return
            raise

    def send_stdin(self, data: bytes) -> None:
        raise NotSupportedError("send_stdin() through mvm serve: its exec takes stdin whole, in the request "
                                "(commands.run(stdin=...)); a running command's stdin is not served")

    def close_stdin(self) -> None:
        self.send_stdin(b"")

    def kill(self, signo: int = 9) -> None:
        """Close the stream: serve kills the command (SIGKILL) once it sees the
        client gone, at its next line or heartbeat (docs/api.md)."""
        if signo != 9:
            raise NotSupportedError(f"kill({signo}) through mvm serve: only closing the stream (SIGKILL)")
        self._killed = True
        if self._sock is not None:
            try:
                # The raw socket's shutdown: wakes the reading thread, TLS or not.
                socket.socket.shutdown(self._sock, socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self._conn.close()


def _payload(o: dict[str, Any]) -> bytes:
    if isinstance(o.get("data"), str):
        return o["data"].encode("utf-8", errors="surrogateescape")
    if isinstance(o.get("base64"), str):
        try:
            return base64.b64decode(o["base64"], validate=True)
        except ValueError:
            raise ApiError(200, "command: a stream line with bad base64") from None
    raise ApiError(200, "command: an output line without data")


class RemoteTransport:
    remote = True

    def __init__(self, client: Client) -> None:
        self.c = client

    def local_only(self, what: str) -> None:
        raise NotSupportedError(f"{what} is not served by mvm serve (its HTTP API has no such verb, "
                                "and it never takes a host path); run it on the host in local mode")

    # -- lifecycle ------------------------------------------------------------
    def create(self, name: str, image: Optional[str], cpus: Optional[int], memory: Any,
               env: dict[str, str], allow: Optional[list[str]], net: Optional[str], copy: Any,
               timeout: float) -> None:
        if net not in (None, "allowlist", "none"):
            self.local_only(f"Sandbox.create(net={net!r})")
        if net == "none" and allow:
            raise ValueError('net="none" takes no allow rules')
        body: dict[str, Any] = {"name": name}
        if image:
            body["image"] = str(image)
        if cpus is not None:
            body["cpus"] = int(cpus)
        if memory is not None:
            body["memory"] = memory if isinstance(memory, int) else str(memory)
        if env:
            body["env"] = {str(k): str(v) for k, v in env.items()}
        if allow and net != "none":
            body["allow"] = [str(r) for r in allow]
        self.c.json("POST", "/v1/sandboxes", timeout, body)
        try:
            for c in copy or []:
                host, guest = c.split(":", 1) if isinstance(c, str) else c
                self._workspace(name, str(host), str(guest), timeout)
        except BaseException:
            self.remove(name, timeout)     # never a half-made sandbox
            raise

    def _workspace(self, name: str, host: str, guest: str, timeout: float) -> None:
        """--copy HOST:GUEST as serve's workspace: GUEST itself if new, else GUEST/basename(HOST)."""
        if not os.path.isdir(host):
            raise ValueError(f"copy={host!r} through mvm serve: a workspace is a directory")
        data = _tar.pack(host, None)
        guest = "/" + guest.strip("/")
        try:
            self.c.call("PUT", _p(name, "/workspace"), timeout, body=data, query={"path": guest}, ctype=TAR)
        except ApiError as e:
            if e.status != 409 or "exists" not in e.message:
                raise
            inside = guest.rstrip("/") + "/" + os.path.basename(os.path.normpath(host))
            self.c.call("PUT", _p(name, "/workspace"), timeout, body=data, query={"path": inside}, ctype=TAR)

    def info(self, name: str, timeout: float) -> dict[str, Any]:
        j = self.c.json("GET", _p(name), timeout)
        if not isinstance(j, dict):
            raise ApiError(200, "a sandbox answer that is not an object")
        return j

    def exists(self, name: str, timeout: float) -> bool:
        try:
            self.info(name, timeout)
            return True
        except NotFoundError:
            return False

    def list(self, timeout: float) -> list[dict[str, Any]]:
        j = self.c.json("GET", "/v1/sandboxes", timeout)
        rows = j.get("sandboxes") if isinstance(j, dict) else None
        if not isinstance(rows, list):
            raise ApiError(200, "list: no sandboxes array in the answer")
        return [r for r in rows if isinstance(r, dict)]

    def remove(self, name: str, timeout: float) -> None:
        try:
            self.c.json("DELETE", _p(name), timeout)
        except NotFoundError:
            pass    # idempotent, as local mode's rm -f

    def status(self, name: str, timeout: float) -> str:
        return str(self.info(name, timeout).get("status", ""))

    # -- commands and files -----------------------------------------------------
    def exec(self, name: str, argv: list[str], envs: dict[str, str], cwd: Optional[str],
             timeout: Optional[float], stdin: Optional[bytes], keep_stdin_open: bool,
             request_timeout: float) -> RemoteExec:
        body: dict[str, Any] = {"cmd": argv}
        if envs:
            body["env"] = envs
        if cwd:
            body["cwd"] = cwd
        if timeout:
            body["timeout"] = min(86400, max(1, math.ceil(timeout)))    # serve takes whole seconds
        if stdin is not None:
            body["stdin"] = _stdin_text(stdin)
        return RemoteExec(self.c, name, body, request_timeout)

    def read_file(self, name: str, path: str, max_bytes: int, timeout: float) -> bytes:
        try:
            return self.c.call("GET", _p(name, "/files"), timeout, query={"path": path}, cap=max_bytes)
        except NotFoundError as e:
            self._file_404(name, f"read {path}", e)
        except ApiError as e:
            if e.status == 200:     # our own cap, from the answer's length
                raise SandboxError(f"{path}: {e.message} (max_bytes={max_bytes})") from None
            raise

    def write_file(self, name: str, path: str, data: bytes, mode: int, timeout: float) -> None:
        try:
            self.c.call("PUT", _p(name, "/files"), timeout, body=data, query={"path": path},
                        ctype="application/octet-stream", cap=MAX_JSON)
        except NotFoundError as e:
            self._file_404(name, f"write {path}", e)

    def _file_404(self, name: str, what: str, e: NotFoundError) -> None:
        """A 404 from files is the file's unless the sandbox itself is gone."""
        if not self.exists(name, 60):
            raise e
        raise AgentError(f"{what}: {e.message}") from None

    # -- checkpoints, copies, review ------------------------------------------
    def checkpoint(self, name: str, tag: Optional[str], timeout: float) -> str:
        j = self.c.json("POST", _p(name, "/checkpoints"), timeout, {"tag": tag} if tag else {})
        return str(j["tag"])

    def rollback(self, name: str, tag: str, timeout: float) -> None:
        self.c.json("POST", _p(name, "/rollback"), timeout, {"tag": tag})   # serve syncs the clock

    def checkpoints(self, name: str, timeout: float) -> list[dict[str, Any]]:
        return list(self.c.json("GET", _p(name, "/checkpoints"), timeout)["checkpoints"])

    def fork(self, name: str, new: str, timeout: float) -> None:
        self.c.json("POST", _p(name, "/fork"), timeout, {"name": new})

    def events(self, name: str, timeout: float) -> list[dict[str, Any]]:
        text = self.c.call("GET", _p(name, "/events"), timeout).decode("utf-8", errors="replace")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- trees and results out (tar streams; docs/api.md, "Trees") ----------------
    def write_tree(self, name: str, host_path: str, guest_dir: str, timeout: float) -> None:
        base = os.path.basename(os.path.normpath(host_path))
        data = _tar.pack(host_path, base)   # as cp -r: lands at guest_dir/base
        self.c.call("PUT", _p(name, "/tree"), timeout, body=data, query={"path": guest_dir}, ctype=TAR)

    def _is_dir(self, name: str, path: str, timeout: float) -> bool:
        ex = self.exec(name, ["test", "-d", path], {}, None, 60, None, False, timeout)
        try:
            for ev in ex.events(None):
                if ev[0] == "exit":
                    return ev[1] == 0
        finally:
            ex.close()
        return False

    def read_tree(self, name: str, guest_path: str, host_dir: str, timeout: Optional[float]) -> None:
        # serve's archive of a directory holds its contents, of a file the file: ask which first.
        is_dir = self._is_dir(name, guest_path, timeout or 600)
        data = self.c.call("GET", _p(name, "/tree"), timeout or 600, query={"path": guest_path}, cap=MAX_TREE)
        if is_dir:
            _tar.unpack(data, os.path.join(host_dir, os.path.basename(guest_path.rstrip("/")) or "root"))
        else:
            _tar.unpack(data, host_dir, into=True)

    def diff(self, name: str, path: Optional[str], timeout: float) -> str:
        data = self.c.call("GET", _p(name, "/diff"), timeout, query={"path": path} if path else None,
                           cap=MAX_TREE)
        return data.decode("utf-8", errors="replace")

    def export(self, name: str, guest_path: str, host_dir: str, timeout: float) -> None:
        if os.path.lexists(host_dir):
            raise FileExistsError(f"{host_dir} exists: export writes a new directory")
        data = self.c.call("GET", _p(name, "/tree"), timeout, query={"path": guest_path}, cap=MAX_TREE)
        _tar.unpack(data, host_dir, skip_git=True)      # as mvm export: no .git comes out

    def promote(self, name: str, checks: list[str], out: str, workspace: Optional[str],
                check_timeout: Optional[int]) -> dict[str, Any]:
        if os.path.lexists(out):
            raise FileExistsError(f"{out} exists: name a new directory")
        body: dict[str, Any] = {"checks": checks}
        if workspace:
            body["workspace"] = workspace
        if check_timeout:
            body["check_timeout"] = int(check_timeout)
        # The checks run before serve answers: wait as long as they may take.
        wait = max(600.0, float(check_timeout or 3600) * max(1, len(checks)) + 600)
        data = self.c.call("POST", _p(name, "/promote"), wait, body=json.dumps(body).encode(), cap=MAX_TREE)
        _tar.unpack(data, out)
        with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
            return dict(json.load(f))

    # -- network ----------------------------------------------------------------
    def net(self, name: str, verb: str, rule: str, timeout: float) -> dict[str, Any]:
        """verb "allow"/"deny"/"remove" with @rule, or "show"; the policy after."""
        try:
            if verb == "show":
                return dict(self.c.json("GET", _p(name, "/network"), timeout))
            return dict(self.c.json("POST", _p(name, "/network"), timeout, {verb: rule}))
        except ApiError as e:
            if e.status == 400:
                raise PolicyError(e.message) from None
            raise


def _stdin_text(data: bytes) -> str:
    """serve's exec takes stdin as a JSON string: UTF-8, no NUL, at most 64 KiB."""
    if len(data) > STDIN_MAX or b"\0" in data:
        raise NotSupportedError(f"stdin of {len(data)} bytes through mvm serve: its exec takes stdin "
                                f"as text of at most {STDIN_MAX} bytes without NUL bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotSupportedError("stdin through mvm serve must be UTF-8 text (its exec body is JSON)") from None
