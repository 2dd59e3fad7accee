"""Lifecycle through the ``mvm`` binary. Only exit statuses, ``--json`` output and
machine formats (patches) are read; error messages are passed on, never parsed."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any, Optional

from .errors import SandboxError, SandboxNotFound, TimeoutError


def binary() -> str:
    """``$MVM_BIN``, else ``mvm`` on ``$PATH``."""
    b = os.environ.get("MVM_BIN") or shutil.which("mvm")
    if not b:
        raise SandboxError("the mvm binary was not found: set MVM_BIN or put mvm on PATH")
    return b


def run(args: list[str], timeout: Optional[float], name: Optional[str] = None,
        ok_codes: tuple[int, ...] = (0,), pass_fds: tuple[int, ...] = ()) -> str:
    """Run ``mvm ARGS``; its stdout, or an error carrying its stderr.

    @pass_fds: descriptors the child inherits (``--env-fd N``)."""
    try:
        p = subprocess.run([binary(), *args], stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout, pass_fds=pass_fds)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"mvm {args[0]}: no answer within {timeout} s") from None
    if p.returncode not in ok_codes:
        msg = p.stderr.decode(errors="replace").strip()
        if name is not None and not os.path.isfile(_config_path(name)):
            raise SandboxNotFound(msg or f"no sandbox named {name}")
        raise SandboxError(msg or f"mvm {args[0]} failed with status {p.returncode}")
    return p.stdout.decode(errors="replace")


def run_json(args: list[str], timeout: Optional[float]) -> Any:
    return json.loads(run(args, timeout))


def _config_path(name: str) -> str:
    from ._state import sandbox_dir
    try:
        return os.path.join(sandbox_dir(name), "config.json")
    except SandboxNotFound:
        return ""


__all__ = ["binary", "run", "run_json", "subprocess"]
