"""The Python SDK against real sandboxes: every call a user relies on, in
local mode and, with MVM_TEST_REMOTE=1, through `mvm serve` (conftest.py).
Where serve offers no counterpart the remote run checks the clear refusal."""
import os
import threading
import time

import pytest

from conftest import REMOTE, host_name
from mvm import (CommandExitError, NotSupportedError, PolicyError, Sandbox, SandboxNotFound, TimeoutError)


def test_create_connect_and_list(sb):
    assert sb.is_running()
    names = {i.name: i for i in Sandbox.list()}
    assert names["py-main"].status == "running"
    assert Sandbox.connect("py-main").name == "py-main"
    with pytest.raises(SandboxNotFound):
        Sandbox.connect("no-such-sandbox")


def test_run_exit_codes_and_separate_streams(sb):
    r = sb.commands.run("echo out; echo err >&2")
    assert (r.stdout, r.stderr, r.exit_code) == ("out\n", "err\n", 0)
    with pytest.raises(CommandExitError) as e:
        sb.commands.run("echo partial; exit 7")
    assert e.value.exit_code == 7 and e.value.stdout == "partial\n"
    r = sb.commands.run("exit 3", check=False)
    assert r.exit_code == 3
    r = sb.commands.run("kill -TERM $$", check=False)
    assert r.exit_code == 128 + 15


def test_env_cwd_and_create_env(sb):
    r = sb.commands.run('echo "$FROM_CREATE $X $(pwd)"', envs={"X": "given"}, cwd="/tmp")
    assert r.stdout == "yes given /tmp\n"
    r = sb.commands.run('echo "$FROM_CREATE"', envs={"FROM_CREATE": "overridden"})
    assert r.stdout == "overridden\n"


def test_output_streams_as_it_comes(sb):
    # By construction, not by timing: the command prints "second" only once
    # the host has seen "first" (the callback creates /tmp/go through a
    # second exec). Output held back until the end would never let it end:
    # the run's timeout (a hang guard) then fails the test.
    seen = []
    go = []

    def on_out(s):
        if not go:
            t = threading.Thread(target=lambda: sb.commands.run("touch /tmp/go"))
            t.start()
            go.append(t)
        seen.append(s)

    r = sb.commands.run("rm -f /tmp/go; echo first; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo second",
                        on_stdout=on_out, timeout=120)
    go[0].join()
    assert "".join(seen) == r.stdout == "first\nsecond\n"


def test_stdin(sb):
    # serve's exec takes stdin whole in its JSON body, at most 64 KiB of text.
    n = 60000 if REMOTE else 100000
    r = sb.commands.run("wc -c; tr a-z A-Z < /dev/null", stdin=b"x" * n)
    assert r.stdout.strip() == str(n)
    if REMOTE:
        with pytest.raises(NotSupportedError):
            sb.commands.run("wc -c", stdin=b"x" * 100000)
    r = sb.commands.run("cat", stdin="hello")
    assert r.stdout == "hello"


def test_background_handle(sb):
    h = sb.commands.run("read line; echo got-$line", background=True, stdin="ping\n")
    assert h.wait().stdout == "got-ping\n"
    h = sb.commands.run("read line; echo got-$line", background=True)
    if REMOTE:
        with pytest.raises(NotSupportedError):
            h.send_stdin("ping\n")     # a running command's stdin is not served
        assert h.wait().stdout == "got-\n"    # its stdin was /dev/null
    else:
        h.send_stdin("ping\n")
        assert h.wait().stdout == "got-ping\n"
    h = sb.commands.run("sleep 600", background=True)
    assert h.kill()
    with pytest.raises(CommandExitError) as e:
        h.wait(timeout=60)
    assert e.value.exit_code == 128 + 9


def test_command_timeout(sb):
    # The timeout ends the command: it raises, and the process is gone (the
    # guest's agent killed it; it was not left running nor waited for).
    with pytest.raises(TimeoutError):
        sb.commands.run("echo $$ > /tmp/to.pid; exec sleep 300", timeout=2)
    r = sb.commands.run("kill -0 $(cat /tmp/to.pid) 2>/dev/null && echo alive || echo gone")
    assert r.stdout == "gone\n"
    assert sb.commands.run("echo still-fine").stdout == "still-fine\n"


def test_invalid_utf8_output_is_replaced(sb):
    assert sb.commands.run("printf 'a\\377b'").stdout == "a\ufffdb"


def test_files_round_trip_text_and_binary(sb):
    sb.files.write("/tmp/deep/er/note.txt", "hello\nwörld\n")
    assert sb.files.read("/tmp/deep/er/note.txt") == "hello\nwörld\n"
    blob = bytes(range(256)) * 1000 + os.urandom(70000)
    sb.files.write("/tmp/blob.bin", blob)
    assert sb.files.read("/tmp/blob.bin", format="bytes") == blob
    assert sb.commands.run("wc -c < /tmp/blob.bin").stdout.strip() == str(len(blob))
    assert sb.files.exists("/tmp/blob.bin")
    assert not sb.files.exists("/tmp/nothing-here")
    names = {e.name: e for e in sb.files.list("/tmp/deep/er")}
    assert names["note.txt"].type == "file" and names["note.txt"].size == len("hello\nwörld\n".encode())
    assert sb.files.make_dir("/tmp/newdir") is True
    assert sb.files.make_dir("/tmp/newdir") is False
    sb.files.remove("/tmp/deep")
    assert not sb.files.exists("/tmp/deep")


def test_trees_in_and_out(sb, tmp_path):
    # Remotely: serve's tar streams (PUT/GET .../tree); the same calls and results.
    src = tmp_path / "tree"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("A\n")
    (src / "sub" / "b.bin").write_bytes(b"\0\1\2")
    sb.files.make_dir("/tmp/in")
    sb.files.write_tree(str(src), "/tmp/in")
    assert sb.files.read("/tmp/in/tree/sub/b.bin", format="bytes") == b"\0\1\2"
    out = tmp_path / "out"
    out.mkdir()
    sb.files.read_tree("/tmp/in/tree", str(out))
    assert (out / "tree" / "a.txt").read_text() == "A\n"


def test_checkpoint_rollback_restores_a_file(sb):
    sb.files.write("/tmp/state.txt", "before\n")
    tag = sb.checkpoint()
    assert tag
    sb.files.write("/tmp/state.txt", "after\n")
    assert sb.checkpoint("named") == "named"
    sb.rollback(tag)
    assert sb.files.read("/tmp/state.txt") == "before\n"
    sb.rollback("named")
    assert sb.files.read("/tmp/state.txt") == "after\n"


def test_fork_diverges(sb):
    sb.files.write("/tmp/fork.txt", "parent\n")
    child = sb.fork("py-child")
    try:
        assert child.files.read("/tmp/fork.txt") == "parent\n"
        child.files.write("/tmp/fork.txt", "child\n")
        sb.files.write("/tmp/fork.txt", "parent-2\n")
        assert child.files.read("/tmp/fork.txt") == "child\n"
        assert sb.files.read("/tmp/fork.txt") == "parent-2\n"
    finally:
        child.kill()
    assert not any(i.name == "py-child" for i in Sandbox.list())


def test_snapshot_and_restore(sb, tmp_path):
    """Local: a snapshot directory, and a new sandbox running from it. Remote:
    both name a directory on the server's host, which a remote caller never
    does: refused by name, nothing made, the sandbox untouched."""
    snap = tmp_path / "snap"
    sb.files.write("/tmp/snap.txt", "snapped\n")
    if REMOTE:
        with pytest.raises(NotSupportedError, match="snapshot.*host path"):
            sb.snapshot(str(snap))
        with pytest.raises(NotSupportedError, match="restore.*host path"):
            Sandbox.restore(str(snap), "py-restored")
        assert not snap.exists()
        assert not any(i.name == "py-restored" for i in Sandbox.list())
        assert sb.files.read("/tmp/snap.txt") == "snapped\n"
        return
    sb.snapshot(str(snap))
    r = Sandbox.restore(str(snap), "py-restored")
    try:
        assert r.files.read("/tmp/snap.txt") == "snapped\n"
        r.files.write("/tmp/snap.txt", "restored\n")
        assert sb.files.read("/tmp/snap.txt") == "snapped\n"
    finally:
        r.kill()
    assert not any(i.name == "py-restored" for i in Sandbox.list())


def test_diff_and_promote_produce_the_bundle(sb, tmp_path):
    # Remotely: the baseline is serve's workspace (create(copy=...)), the
    # patch GET .../diff, the bundle POST .../promote's tar, unpacked into out.
    sb.commands.run("cd /data/proj && sed -i s/two/TWO/ edit.txt && echo new > added.txt")
    patch = sb.diff()
    assert "+TWO" in patch and "added.txt" in patch and "keep.txt" not in patch
    out = tmp_path / "bundle"
    rep = sb.promote(checks=["grep -q TWO edit.txt", "false"], out=str(out))
    assert rep.checks_passed is False
    assert [c["passed"] for c in rep.checks] == [True, False]
    assert rep.patch == patch
    assert (out / "report.json").is_file() and (out / "checks" / "1.log").is_file()
    exp = tmp_path / "exported"
    sb.export("/data/proj", str(exp))
    assert (exp / "edit.txt").read_text() == "one\nTWO\nthree\n"


def test_events(sb):
    types = [e["type"] for e in sb.events()]
    assert "created" in types and "checkpoint" in types and "rollback" in types


def test_allow_and_deny_change_what_the_guest_reaches(sb):
    host = os.environ.get("MVM_TEST_NET_HOST")
    if not host:
        pytest.skip("no network test bed (tests/integration/sdk-python.sh sets it up as root)")
    url = f"http://{host}:8080/hello.txt"
    get = f"timeout 20 wget -q -O- {url}"
    rule = f"{host}:8080/tcp"

    def check(allowed):
        if REMOTE:      # no dry run through serve
            with pytest.raises(NotSupportedError):
                sb.network.check(rule)
        else:
            assert sb.network.check(rule)["allowed"] is allowed

    check(False)
    assert sb.commands.run(get, check=False).exit_code != 0
    sb.network.allow(rule)
    assert any(host in r and "8080" in r for r in sb.network.show()["allow"])
    check(True)
    assert "hello-from-test-host" in sb.commands.run(get).stdout
    sb.network.deny(rule)
    check(False)
    assert sb.commands.run(get, check=False).exit_code != 0
    with pytest.raises(PolicyError):
        sb.network.allow("example.com:443-80")


def test_context_manager_leaves_nothing_behind(serve):
    state = os.environ["MVM_STATE_DIR"]
    with Sandbox.create(memory="128M", net="none") as s:
        name = s.name
        assert s.commands.run("echo up").stdout == "up\n"
        pid = int(open(os.path.join(state, host_name(name), "pid")).read())
    assert not os.path.exists(os.path.join(state, host_name(name)))
    assert not any(i.name == name for i in Sandbox.list())
    assert not _alive(pid), "the VMM still runs"


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_sandbox_lifetime_timeout(serve):
    if REMOTE:      # serve refuses a lifetime: DELETE the sandbox
        with pytest.raises(NotSupportedError, match="timeout"):
            Sandbox.create(memory="128M", net="none", timeout=5)
        return
    s = Sandbox.create(memory="128M", net="none", timeout=5)
    try:
        deadline = time.monotonic() + 120
        while any(i.name == s.name for i in Sandbox.list()) and time.monotonic() < deadline:
            time.sleep(1)
        assert not any(i.name == s.name for i in Sandbox.list()), "the lifetime timeout did not remove it"
    finally:
        s.kill()


def test_request_timeout_is_separate(sb):
    # A request timeout shorter than the command's run: the command's own
    # timeout governs exec. The command outlives the request timeout by its
    # own sleep, whatever the machine's speed; only the exec itself runs under
    # the short timeout (connect's lookup is not the property, and a loaded
    # box can take longer than 5 s to answer it: CI, 2026-12-07).
    quick = Sandbox.connect("py-main")
    quick.request_timeout = 5
    assert quick.commands.run("sleep 7; echo ok", timeout=60).stdout == "ok\n"
    assert quick.request_timeout == 5
