"""A PEP 517 build backend in the standard library alone, so that
``pip install sdk/python`` needs nothing from a package index. It builds a
pure-Python wheel of the ``mvm`` package (and an sdist)."""
from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME, VERSION = "mvm", "0.1.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST_INFO = f"{NAME}-{VERSION}.dist-info"
TAG = "py3-none-any"


def _metadata() -> str:
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: KVM microVM sandboxes for AI agents: the Python SDK of mvm\n"
            "Requires-Python: >=3.9\nDescription-Content-Type: text/markdown\n\n" + readme)


def _package_files():
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, NAME)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            if f.endswith((".py", ".typed")):
                full = os.path.join(dirpath, f)
                yield full, os.path.relpath(full, ROOT)


def _record_line(arc: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def _dist_info(meta_dir: str) -> None:
    os.makedirs(meta_dir, exist_ok=True)
    with open(os.path.join(meta_dir, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(meta_dir, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(f"Wheel-Version: 1.0\nGenerator: mvm_build\nRoot-Is-Purelib: true\nTag: {TAG}\n")


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _dist_info(os.path.join(metadata_directory, DIST_INFO))
    return DIST_INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel = f"{NAME}-{VERSION}-{TAG}.whl"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        def add(arc: str, data: bytes) -> None:
            z.writestr(arc, data)
            records.append(_record_line(arc, data))

        for full, arc in _package_files():
            with open(full, "rb") as f:
                add(arc, f.read())
        add(f"{DIST_INFO}/METADATA", _metadata().encode())
        add(f"{DIST_INFO}/WHEEL",
            f"Wheel-Version: 1.0\nGenerator: mvm_build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode())
        records.append(f"{DIST_INFO}/RECORD,,")
        z.writestr(f"{DIST_INFO}/RECORD", "\n".join(records) + "\n")
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "_build/mvm_build.py"]:
            t.add(os.path.join(ROOT, rel), f"{base}/{rel}")
        for full, arc in _package_files():
            t.add(full, f"{base}/{arc}")
        pkg = _metadata().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg)
        t.addfile(info, io.BytesIO(pkg))
    return os.path.basename(path)
