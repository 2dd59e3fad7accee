"""`pip install sdk/python` works with no package index at all."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")


def test_pip_install_offline(tmp_path):
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        pytest.skip("pip is not installed for this Python")
    target = tmp_path / "site"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir",
                        "--disable-pip-version-check", "--target", str(target), ROOT],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    out = subprocess.run([sys.executable, "-c", "import mvm; print(mvm.__file__, mvm.Sandbox.create.__doc__ is not None)"],
                         capture_output=True, text=True, cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(target)})
    assert out.stdout.startswith(str(target)) and out.stdout.strip().endswith("True"), out.stdout + out.stderr
