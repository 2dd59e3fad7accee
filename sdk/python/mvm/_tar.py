"""Trees as tar for the remote transport (docs/api.md, "Trees"): a host tree
packed for ``PUT .../tree`` or ``.../workspace``, and an archive from
``GET .../tree`` or ``POST .../promote`` unpacked on this host. What comes
back started in the guest: serve already left out unsafe names and links
that leave the tree, and this side checks again before writing anything,
beneath a new directory only, with no link followed at the leaf."""
from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from typing import Optional

from .errors import AgentError


def pack(host_path: str, arcname: Optional[str]) -> bytes:
    """@host_path as a tar: its contents (arcname None, a directory) or itself
    under @arcname. Only files, directories and symlinks (as links)."""
    buf = io.BytesIO()

    def keep(ti: tarfile.TarInfo) -> Optional[tarfile.TarInfo]:
        if not (ti.isreg() or ti.isdir() or ti.issym()):
            return None     # FIFOs, devices: serve refuses them; hard links come as files
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti

    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, dereference=False) as t:
        if arcname is None:
            for entry in sorted(os.listdir(host_path)):
                t.add(os.path.join(host_path, entry), arcname=entry, filter=keep)
        else:
            t.add(host_path, arcname=arcname, filter=keep)
    return buf.getvalue()


def _inside(link: str, target: str) -> bool:
    """A symlink at @link whose @target stays in the tree, lexically (ap_link_inside)."""
    if not target or target.startswith("/"):
        return False
    depth = link.count("/")
    named = False
    for part in target.split("/"):
        if part == "..":
            if named:
                return False
            depth -= 1
            if depth < 0:
                return False
        elif part not in ("", "."):
            named = True
    return True


def _one(t: tarfile.TarFile, m: tarfile.TarInfo, dest: str, skip_git: bool) -> None:
    name = m.name.rstrip("/")
    parts = name.split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise AgentError(f"the archive names an unsafe path: {name[:200]!r}")
    if skip_git and (any(p.lower() == ".git" for p in parts) or
                     (m.issym() and ".git" in m.linkname.lower().split("/"))):
        return      # as mvm export: git metadata from a guest runs guest code on the host
    if any(os.path.islink(os.path.join(dest, *parts[:i])) for i in range(1, len(parts))):
        raise AgentError(f"the archive writes beneath one of its symlinks: {name[:200]!r}")
    path = os.path.join(dest, *parts)
    if m.isdir():
        os.makedirs(path, exist_ok=True)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if m.issym():
        if _inside(name, m.linkname):
            os.symlink(m.linkname, path)
        return
    if not m.isreg():
        return
    src = t.extractfile(m)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, m.mode & 0o777)
    with os.fdopen(fd, "wb") as f, src:
        shutil.copyfileobj(src, f)


def unpack(data: bytes, target: str, into: bool = False, skip_git: bool = False) -> None:
    """@data unpacked as the new directory @target (which must not exist), or,
    @into, its top-level members placed in the existing directory @target,
    none of them existing yet. Staged beside (or in) @target, then renamed."""
    parent = os.path.abspath(target) if into else (os.path.dirname(os.path.abspath(target)) or ".")
    if os.path.lexists(target) and not into:
        raise FileExistsError(f"{target} exists: name a new directory")
    stage = tempfile.mkdtemp(prefix=".mvm-tar-", dir=parent)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as t:
            for m in t:
                _one(t, m, stage, skip_git)
        if not into:
            os.rename(stage, target)
            stage = ""
        else:
            for entry in os.listdir(stage):
                dst = os.path.join(target, entry)
                if os.path.lexists(dst):
                    raise FileExistsError(f"{dst} exists: a copy out writes a new file or directory")
                os.rename(os.path.join(stage, entry), dst)
    except tarfile.TarError as e:
        raise AgentError(f"the archive from mvm serve is broken: {e}") from None
    finally:
        if stage:
            shutil.rmtree(stage, ignore_errors=True)
