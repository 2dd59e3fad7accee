"""Where a sandbox's state lives, and its Unix sockets (docs/api.md)."""
from __future__ import annotations

import json
import os
import re
import socket
import time
from typing import Any

from .errors import SandboxNotFound, TimeoutError

# fullmatch, never match(): "$" also matches before a trailing newline.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")


def name_ok(name: object) -> bool:
    """A sandbox name as the CLI takes it: [A-Za-z0-9][A-Za-z0-9_.-]*, at most 63."""
    return isinstance(name, str) and NAME_RE.fullmatch(name) is not None


def state_root() -> str:
    """``${MVM_STATE_DIR:-${XDG_STATE_HOME:-~/.local/state}/mvm}``."""
    root = os.environ.get("MVM_STATE_DIR")
    if root:
        return root
    xdg = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(xdg, "mvm")


def sandbox_dir(name: str) -> str:
    if not name_ok(name):
        raise SandboxNotFound(f"not a sandbox name: {name!r}")
    return os.path.join(state_root(), name)


def exists(name: str) -> bool:
    return name_ok(name) and os.path.isfile(os.path.join(sandbox_dir(name), "config.json"))


def config(name: str) -> dict[str, Any]:
    """The sandbox's config.json."""
    try:
        with open(os.path.join(sandbox_dir(name), "config.json"), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise SandboxNotFound(f"no sandbox named {name}") from None


def connect_unix(name: str, file: str, timeout: float) -> socket.socket:
    """A stream to the socket @file in the sandbox's directory, however long its path.

    Paths longer than sun_path go through /proc/self/fd, as the CLI does.
    """
    d = sandbox_dir(name)
    path = os.path.join(d, file)
    dfd = -1
    if len(path.encode()) >= 108:
        dfd = os.open(d, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        path = f"/proc/self/fd/{dfd}/{file}"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
    except FileNotFoundError:
        s.close()
        if not exists(name):
            raise SandboxNotFound(f"no sandbox named {name}") from None
        raise
    except BaseException:
        s.close()
        raise
    finally:
        if dfd >= 0:
            os.close(dfd)
    return s


def deadline_left(deadline: float, what: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError(f"{what}: timed out")
    return left
