"""The SDK's own defences (issue 27 items 9 and 12): nothing secret on a
command line, a reaper that imports nothing from the caller's directory, no
symlink followed out of a tree being copied in, bounded captured output,
names checked whole. The first three are local mechanisms (the mvm binary's
command line, the lifetime watchdog, write_tree): skipped in remote mode."""
import os
import stat
import subprocess
import sys

import pytest

from conftest import host_name
from mvm import Sandbox, SandboxError, SandboxNotFound
from mvm import _agent, _state, sandbox as sandbox_mod


@pytest.mark.local_only
def test_create_env_reaches_mvm_through_a_descriptor_never_argv(tmp_path, monkeypatch):
    """A stand-in for mvm records its command line and what --env-fd holds;
    the values must be in the latter only (argv is /proc/PID/cmdline)."""
    log = tmp_path / "log"
    log.mkdir()
    fake = tmp_path / "fake-mvm"
    fake.write_text("#!/bin/sh\n"
                    f"printf '%s\\n' \"$@\" > {log}/argv\n"
                    "while [ $# -gt 0 ]; do\n"
                    f"  if [ \"$1\" = --env-fd ]; then cat \"/proc/self/fd/$2\" > {log}/env; fi\n"
                    "  shift\n"
                    "done\n"
                    "echo 'fake mvm: not creating anything' >&2; exit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("MVM_BIN", str(fake))
    secret = "tok-" + os.urandom(8).hex()
    with pytest.raises(SandboxError):
        Sandbox.create(name="py-envfd", env={"TOKEN": secret, "MULTI": "a\nb"})
    argv = (log / "argv").read_text()
    assert secret not in argv and "TOKEN" not in argv, argv
    assert "--env-fd" in argv.split("\n")
    assert (log / "env").read_bytes() == f"TOKEN={secret}\0MULTI=a\nb\0".encode()


@pytest.mark.local_only
def test_reaper_imports_nothing_from_the_callers_directory(tmp_path, monkeypatch):
    evil = tmp_path / "evil"
    (evil / "mvm").mkdir(parents=True)
    marker = tmp_path / "ran"
    payload = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    (evil / "json.py").write_text(payload)
    (evil / "subprocess.py").write_text(payload)
    (evil / "mvm" / "__init__.py").write_text(payload)
    (evil / "mvm" / "_reaper.py").write_text(payload)
    monkeypatch.chdir(evil)
    monkeypatch.setenv("PYTHONPATH", str(evil))
    # A name that does not exist: the reaper wakes at once, finds nothing, exits 0.
    p = sandbox_mod._spawn_reaper("py-no-such-sandbox", 0.0, "0")
    assert p.wait(timeout=60) == 0
    assert not marker.exists(), marker.read_text()


@pytest.mark.local_only
def test_write_tree_never_follows_a_symlink_swapped_in(sb, tmp_path, monkeypatch):
    """The file is replaced by a symlink to a secret right after it was
    looked at (the race, made deterministic): the secret never reaches the guest."""
    src = tmp_path / "tree"
    src.mkdir()
    (src / "f.txt").write_text("mine\n")
    secret = tmp_path / "secret"
    secret.write_text("HOST-SECRET\n")
    real_lstat = os.lstat
    swapped = []

    def lstat_then_swap(path, *a, **kw):
        st = real_lstat(path, *a, **kw)
        if os.fspath(path).endswith("f.txt") and stat.S_ISREG(st.st_mode) and not swapped:
            os.unlink(src / "f.txt")
            os.symlink(secret, src / "f.txt")
            swapped.append(path)
        return st

    monkeypatch.setattr(os, "lstat", lstat_then_swap)
    try:
        sb.files.write_tree(str(src), "/tmp/swap")
    except SandboxError as e:
        assert "changed" in str(e)
    monkeypatch.undo()
    assert swapped, "the tree walk never looked at f.txt"
    r = sb.commands.run("cat /tmp/swap/tree/f.txt 2>/dev/null; true")
    assert "HOST-SECRET" not in r.stdout


def test_captured_output_is_capped(sb):
    seen = []
    r = sb.commands.run("head -c 3000000 /dev/zero | tr '\\0' a", max_output=1 << 20,
                        on_stdout=lambda s: seen.append(len(s)))
    assert len(r.stdout) == 1 << 20 and set(r.stdout) == {"a"}
    assert r.truncated
    assert sum(seen) == 3000000, "the handler still gets everything"
    r = sb.commands.run("echo small")
    assert (r.stdout, r.truncated) == ("small\n", False)


def test_names_with_a_trailing_newline_are_refused(sb):
    assert _state.exists(host_name("py-main"))
    assert not _state.exists(host_name("py-main") + "\n")
    with pytest.raises(SandboxNotFound):
        _state.sandbox_dir("py-main\n")
    with pytest.raises(SandboxNotFound):
        Sandbox.connect("py-main\n")
    with pytest.raises(ValueError):
        Sandbox.create(name="py-new\n")
