"""``sb.files``: the guest's file system (E2B's ``Filesystem``)."""
from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, IO, Literal, Optional, Union, overload

from .errors import SandboxError

if TYPE_CHECKING:
    from .commands import CommandResult
    from .sandbox import Sandbox

DEFAULT_MAX_READ = 256 << 20


@dataclass
class EntryInfo:
    """One directory entry: ``type`` is "file", "dir", "symlink" or "other" (FIFO, socket, device)."""
    name: str
    path: str
    type: str
    size: int


@dataclass
class WriteInfo:
    name: str
    path: str
    type: str = "file"


def _abs(path: str) -> str:
    if not path.startswith("/"):
        raise ValueError(f"guest paths are absolute: {path!r}")
    return posixpath.normpath(path)


class Files:
    """Read and write files in a sandbox: ``sb.files.read(...)``."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def _sh(self, script: str, *args: str) -> "CommandResult":
        return self._sb.commands.run(["sh", "-c", script, "sh", *args], check=False,
                                     timeout=self._sb.request_timeout)

    @overload
    def read(self, path: str, format: Literal["text"] = "text", max_bytes: int = ...) -> str: ...
    @overload
    def read(self, path: str, format: Literal["bytes"], max_bytes: int = ...) -> bytes: ...

    def read(self, path: str, format: str = "text", max_bytes: int = DEFAULT_MAX_READ) -> Union[str, bytes]:
        """The file at @path, as text (UTF-8, invalid bytes replaced) or bytes."""
        if format not in ("text", "bytes"):
            raise ValueError('format is "text" or "bytes"')
        data = self._sb._t.read_file(self._sb.name, _abs(path), max_bytes, self._sb.request_timeout)
        return data if format == "bytes" else data.decode(errors="replace")

    def write(self, path: str, data: Union[str, bytes, IO[bytes]], mode: int = 0o644) -> WriteInfo:
        """Create or replace the file at @path; missing parent directories are made."""
        p = _abs(path)
        if hasattr(data, "read"):
            data = data.read()  # type: ignore[union-attr]
        raw = data.encode() if isinstance(data, str) else bytes(data)  # type: ignore[arg-type]
        parent = posixpath.dirname(p)
        if parent != "/":
            self.make_dir(parent)
        self._sb._t.write_file(self._sb.name, p, raw, mode, self._sb.request_timeout)
        if self._sb.remote and mode != 0o644:
            # mvm serve writes 0644; the mode follows in a second step.
            self._sh('chmod "$1" "$2"', f"{mode & 0o7777:o}", p)
        return WriteInfo(posixpath.basename(p), p)

    def list(self, path: str) -> list[EntryInfo]:
        """The entries directly in the directory @path (not recursive), sorted by name."""
        d = _abs(path)
        script = ('cd -- "$1" || exit 3; for f in * .*; do '
                  '[ "$f" = . ] || [ "$f" = .. ] && continue; [ -e "$f" ] || [ -L "$f" ] || continue; '
                  's=0; if [ -L "$f" ]; then t=symlink; elif [ -d "$f" ]; then t=dir; '
                  'elif [ -f "$f" ]; then t=file; s=$(wc -c < "$f" 2>/dev/null || echo 0); else t=other; fi; '
                  'printf "%s/%s/%s\\0" "$t" "$s" "$f"; done')
        r = self._sh(script, d)
        if r.exit_code != 0:
            raise SandboxError(f"list {d}: {r.stderr.strip() or 'not a directory'}")
        out = []
        for rec in filter(None, r.stdout.split("\0")):
            t, s, n = rec.split("/", 2)
            out.append(EntryInfo(n, posixpath.join(d, n), t, int(s.strip() or 0)))
        return sorted(out, key=lambda e: e.name)

    def exists(self, path: str) -> bool:
        """True if something (a dangling symlink too) is at @path."""
        return self._sh('[ -e "$1" ] || [ -L "$1" ]', _abs(path)).exit_code == 0

    def remove(self, path: str) -> None:
        """Remove the file or tree at @path (nothing there is not an error)."""
        r = self._sh('rm -rf -- "$1"', _abs(path))
        if r.exit_code != 0:
            raise SandboxError(f"remove {path}: {r.stderr.strip()}")

    def make_dir(self, path: str) -> bool:
        """Make the directory @path and its parents. False if it existed already."""
        r = self._sh('[ -d "$1" ] && exit 10; mkdir -p -- "$1"', _abs(path))
        if r.exit_code not in (0, 10):
            raise SandboxError(f"make_dir {path}: {r.stderr.strip()}")
        return r.exit_code == 0

    def write_tree(self, host_path: str, guest_dir: str) -> None:
        """Copy the host file or tree @host_path into the guest directory @guest_dir (as ``cp -r``)."""
        self._sb._t.write_tree(self._sb.name, host_path, _abs(guest_dir), max(self._sb.request_timeout, 600))

    def read_tree(self, guest_path: str, host_dir: str, timeout: Optional[float] = None) -> None:
        """Copy the guest file or tree @guest_path into the host directory @host_dir.

        Locally through ``mvm cp`` (a tree from the guest is hostile: the
        host's C receiver resolves every path beneath @host_dir with no-follow);
        remotely as serve's tar stream, checked again and unpacked beside
        @host_dir first, then moved into place whole.
        """
        self._sb._t.read_tree(self._sb.name, _abs(guest_path), host_dir, timeout)

