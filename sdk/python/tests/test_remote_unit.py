"""The SDK's remote transport against a tiny fake `mvm serve` on loopback:
no KVM, no mvm binary (run by `make unit`). The fake writes raw HTTP, so the
tests choose where chunks split JSON lines and when the server goes away."""
import base64
import os
import json
import socket
import subprocess
import threading

import pytest

pytestmark = pytest.mark.nokvm

from mvm import (AgentError, ApiConnectionError, ApiError, AuthenticationError, CommandExitError,  # noqa: E402
                 ForbiddenError, NotFoundError, NotSupportedError, PolicyError, RateLimitError, Sandbox,
                 SandboxError, SandboxNotFound, TimeoutError, UnavailableError)
from mvm import _remote  # noqa: E402

KEY = "mvm_" + "ab" * 32


class Fake:
    """One listening socket; each request goes to @handler(req, conn), which writes the answer."""

    def __init__(self, handler):
        self.handler = handler
        self.requests = []
        self.closed = threading.Event()     # set when a handler saw its client go away
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.t = threading.Thread(target=self._loop, daemon=True)
        self.t.start()

    def _loop(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(c,), daemon=True).start()

    def _one(self, c):
        with c:
            f = c.makefile("rb")
            line = f.readline().decode()
            if not line:
                return
            method, target, _ = line.split(" ", 2)
            headers = {}
            while True:
                h = f.readline().decode()
                if h in ("\r\n", "\n", ""):
                    break
                k, v = h.split(":", 1)
                headers[k.strip().lower()] = v.strip()
            body = f.read(int(headers.get("content-length", 0)))
            req = {"method": method, "target": target, "headers": headers, "body": body}
            self.requests.append(req)
            self.handler(req, c)

    def stop(self):
        self.sock.close()


def answer(c, status, body=b"", ctype="application/json"):
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    c.sendall(b"HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
              % (status, ctype.encode(), len(body)) + body)


def chunked_head(c):
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n")


def chunk(c, data):
    c.sendall(b"%x\r\n" % len(data) + data + b"\r\n")


def end_chunks(c):
    c.sendall(b"0\r\n\r\n")


@pytest.fixture
def fake(monkeypatch):
    made = []

    def make(handler):
        f = Fake(handler)
        made.append(f)
        monkeypatch.setenv("MVM_API_URL", f.url)
        monkeypatch.setenv("MVM_API_KEY", KEY)
        return f
    yield make
    for f in made:
        f.stop()


def sandbox_row(name="w1", status="running"):
    return {"name": name, "status": status, "cpus": 1, "memory": 268435456, "disk": 0, "image": "minimal",
            "template": "", "created": 1}


def lines(*objs):
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def exec_server(stream_bytes, split):
    """GET answers the sandbox; exec answers @stream_bytes in chunks of @split bytes."""
    def h(req, c):
        if req["method"] == "GET":
            return answer(c, 200, sandbox_row())
        chunked_head(c)
        for i in range(0, len(stream_bytes), split):
            chunk(c, stream_bytes[i:i + split])
        end_chunks(c)
    return h


@pytest.mark.parametrize("split", [1, 2, 3, 7, 64, 100000])
def test_stream_lines_split_anywhere_by_chunks(fake, split):
    out = "héllo wörld\n" * 3
    stream = lines({"type": "stdout", "data": out[:7]}, {"type": "heartbeat"},
                   {"type": "stderr", "base64": base64.b64encode(b"\xff\x00err").decode()},
                   {"type": "stdout", "data": out[7:]},
                   {"type": "exit", "exit_code": 0, "signal": None, "timed_out": False})
    f = fake(exec_server(stream, split))
    sb = Sandbox.connect("w1")
    assert sb.remote
    seen = []
    r = sb.commands.run("echo hi", envs={"A": "b"}, cwd="/tmp", timeout=2.5, on_stdout=seen.append)
    assert (r.stdout, r.stderr, r.exit_code) == (out, "\ufffd\x00err", 0)
    assert "".join(seen) == out
    req = f.requests[-1]
    assert (req["method"], req["target"]) == ("POST", "/v1/sandboxes/w1/exec")
    assert req["headers"]["authorization"] == "Bearer " + KEY
    assert json.loads(req["body"]) == {"cmd": ["sh", "-c", "echo hi"], "env": {"A": "b"}, "cwd": "/tmp",
                                       "timeout": 3}


def test_exit_codes_signals_and_timeouts(fake):
    answers = iter([
        {"type": "exit", "exit_code": 7, "signal": None, "timed_out": False},
        {"type": "exit", "exit_code": None, "signal": 15, "timed_out": False},
        {"type": "exit", "exit_code": None, "signal": 9, "timed_out": True},
        {"type": "error", "error": "exec: no such file"},
    ])

    def h(req, c):
        if req["method"] == "GET":
            return answer(c, 200, sandbox_row())
        chunked_head(c)
        chunk(c, lines({"type": "stdout", "data": "partial\n"}, next(answers)))
        end_chunks(c)

    fake(h)
    sb = Sandbox.connect("w1")
    with pytest.raises(CommandExitError) as e:
        sb.commands.run("exit 7")
    assert (e.value.exit_code, e.value.stdout) == (7, "partial\n")
    assert sb.commands.run("kill -TERM $$", check=False).exit_code == 128 + 15
    with pytest.raises(TimeoutError):
        sb.commands.run("sleep 100", timeout=1)
    with pytest.raises(AgentError, match="no such file"):
        sb.commands.run("nope")


@pytest.mark.parametrize("cut", ["between-chunks", "mid-chunk", "mid-line"])
def test_server_gone_mid_stream_is_a_clear_error(fake, cut):
    def h(req, c):
        if req["method"] == "GET":
            return answer(c, 200, sandbox_row())
        chunked_head(c)
        chunk(c, lines({"type": "stdout", "data": "first\n"}))
        if cut == "mid-chunk":
            c.sendall(b"40\r\n" + b'{"type":"stdout"')
        elif cut == "mid-line":
            chunk(c, b'{"type":"stdout","da')
        c.shutdown(socket.SHUT_RDWR)

    fake(h)
    seen = []
    with pytest.raises(ApiConnectionError, match="cut|ended before"):
        Sandbox.connect("w1").commands.run("long", on_stdout=seen.append)
    assert seen == ["first\n"]


def test_silent_server_times_out_instead_of_hanging(fake, monkeypatch):
    monkeypatch.setattr(_remote, "STREAM_IDLE", 0.5)
    release = threading.Event()

    def h(req, c):
        if req["method"] == "GET":
            return answer(c, 200, sandbox_row())
        chunked_head(c)
        chunk(c, lines({"type": "stdout", "data": "x"}))
        release.wait(60)    # neither output nor heartbeat: a stopped server

    fake(h)
    try:
        with pytest.raises(TimeoutError, match="heartbeat"):
            Sandbox.connect("w1", request_timeout=0.5).commands.run("hang")
    finally:
        release.set()


@pytest.mark.parametrize("status,cls", [(401, AuthenticationError), (403, ForbiddenError),
                                        (404, NotFoundError), (429, RateLimitError),
                                        (503, UnavailableError), (500, ApiError), (409, ApiError)])
def test_error_statuses_map_to_types_with_serves_text(fake, status, cls):
    fake(lambda req, c: answer(c, status, {"error": f"why {status}\x07"}))
    with pytest.raises(cls) as e:
        Sandbox.list()
    assert type(e.value) is cls
    assert e.value.status == status and e.value.message == f"why {status}?"
    assert f"why {status}" in str(e.value)
    assert isinstance(e.value, ApiError)


def test_error_types_keep_the_sdk_hierarchy(fake):
    assert issubclass(NotFoundError, SandboxNotFound) and issubclass(ForbiddenError, PolicyError)
    fake(lambda req, c: answer(c, 404, {"error": "no sandbox named other"}))
    with pytest.raises(SandboxNotFound):
        Sandbox.connect("other")
    fake(lambda req, c: answer(c, 502, b"<html>bad gateway</html>", "text/html"))
    with pytest.raises(ApiError, match="bad gateway"):
        Sandbox.list()


def test_create_body_follows_sandbox_create(fake):
    def h(req, c):
        answer(c, 201, sandbox_row("web"))

    f = fake(h)
    sb = Sandbox.create(name="web", template="minimal", cpus=2, memory="512M", env={"K": "v"},
                        allow=["example.com:443/tcp"])
    assert sb.name == "web"
    req = f.requests[0]
    assert (req["method"], req["target"]) == ("POST", "/v1/sandboxes")
    assert json.loads(req["body"]) == {"name": "web", "image": "minimal", "cpus": 2, "memory": "512M",
                                       "env": {"K": "v"}, "allow": ["example.com:443/tcp"]}
    Sandbox.create(name="bare", net="none")
    assert json.loads(f.requests[1]["body"]) == {"name": "bare"}


def test_what_serve_lacks_is_refused_by_name_before_any_request(fake, tmp_path):
    f = fake(lambda req, c: answer(c, 200, sandbox_row()))
    for call, word in [(lambda: Sandbox.create(name="x", timeout=60), "timeout"),
                       (lambda: Sandbox.create(name="x", net="open"), "open"),
                       (lambda: Sandbox.restore(str(tmp_path / "s"), "x"), "restore.*host directory.*host path")]:
        with pytest.raises(NotSupportedError, match=word):
            call()
    assert f.requests == []
    sb = Sandbox.connect("w1")
    for call, word in [(lambda: sb.snapshot(str(tmp_path / "s")), "snapshot.*host directory.*host path"),
                       (lambda: sb.set_timeout(5), "set_timeout"),
                       (lambda: sb.network.check("a:1/tcp"), "check"),
                       (lambda: sb.commands.run("cat", stdin=b"x" * (64 * 1024 + 1)), "stdin"),
                       (lambda: sb.commands.run("cat", stdin=b"\xff"), "UTF-8")]:
        with pytest.raises(NotSupportedError, match=word):
            call()
    assert isinstance(NotSupportedError("x"), NotImplementedError)
    assert len(f.requests) == 1     # connect's GET only
    assert not (tmp_path / "s").exists(), "a refused snapshot/restore touched the local directory"


def test_stdin_goes_whole_in_the_request_and_send_stdin_is_refused(fake):
    def h(req, c):
        if req["method"] == "GET":
            return answer(c, 200, sandbox_row())
        chunked_head(c)
        chunk(c, lines({"type": "exit", "exit_code": 0, "signal": None, "timed_out": False}))
        end_chunks(c)

    f = fake(h)
    sb = Sandbox.connect("w1")
    sb.commands.run("cat", stdin="hello")
    assert json.loads(f.requests[-1]["body"])["stdin"] == "hello"
    h = sb.commands.run("cat", background=True)
    with pytest.raises(NotSupportedError, match="send_stdin"):
        h.send_stdin("more")
    h.wait()


def test_kill_closes_the_stream_and_reads_as_sigkill(fake):
    gone = threading.Event()

    def h(req, c):
        if req["method"] == "GET":
            return answer(c, 200, sandbox_row())
        chunked_head(c)
        chunk(c, lines({"type": "stdout", "data": "running\n"}))
        c.settimeout(60)
        try:
            while c.recv(1):    # serve notices the client gone; the agent kills the command
                pass
        except OSError:
            pass
        gone.set()

    fake(h)
    hd = Sandbox.connect("w1").commands.run("sleep 600", background=True)
    assert hd.kill()
    with pytest.raises(CommandExitError) as e:
        hd.wait(timeout=60)
    assert e.value.exit_code == 128 + 9
    assert gone.wait(60), "the stream's connection stayed open"


def test_files_round_trip_and_a_missing_file_is_not_a_missing_sandbox(fake):
    store = {}

    def h(req, c):
        path = req["target"].split("?path=", 1)[-1]
        if req["target"] == "/v1/sandboxes/w1":
            return answer(c, 200, sandbox_row())
        if req["target"].startswith("/v1/sandboxes/w1/exec"):   # make_dir's sh
            chunked_head(c)
            chunk(c, lines({"type": "exit", "exit_code": 10, "signal": None, "timed_out": False}))
            return end_chunks(c)
        if req["method"] == "PUT":
            store[path] = req["body"]
            return answer(c, 200, {"path": path, "bytes": len(req["body"])})
        if path in store:
            return answer(c, 200, store[path], "application/octet-stream")
        answer(c, 404, {"error": f"{path}: No such file or directory"})

    f = fake(h)
    sb = Sandbox.connect("w1")
    blob = bytes(range(256)) * 10
    sb.files.write("/tmp/dir/a b.bin", blob)
    put = [r for r in f.requests if r["method"] == "PUT"][0]
    assert put["target"] == "/v1/sandboxes/w1/files?path=%2Ftmp%2Fdir%2Fa%20b.bin"
    assert sb.files.read("/tmp/dir/a b.bin", format="bytes") == blob
    with pytest.raises(AgentError, match="No such file") as e:
        sb.files.read("/tmp/none")
    assert not isinstance(e.value, SandboxNotFound)
    with pytest.raises(SandboxError, match="max_bytes"):
        sb.files.read("/tmp/dir/a b.bin", max_bytes=10)


def test_network_verbs(fake):
    def h(req, c):
        if req["method"] == "GET" and req["target"] == "/v1/sandboxes/w1":
            return answer(c, 200, sandbox_row())
        if req["method"] == "GET":
            return answer(c, 200, {"mode": "allowlist", "allow": ["a:1/tcp"], "deny": []})
        rule = json.loads(req["body"])
        if rule.get("allow") == "bad":
            return answer(c, 400, {"error": "bad rule"})
        if rule.get("allow") == "far":
            return answer(c, 403, {"error": "beyond the ceiling"})
        answer(c, 200, {"mode": "allowlist", "allow": [rule.get("allow")], "deny": []})

    f = fake(h)
    sb = Sandbox.connect("w1")
    sb.network.allow("b:2/tcp")
    assert json.loads(f.requests[-1]["body"]) == {"allow": "b:2/tcp"}
    sb.network.deny("c:3/tcp")
    assert json.loads(f.requests[-1]["body"]) == {"deny": "c:3/tcp"}
    assert sb.network.show()["allow"] == ["a:1/tcp"]
    with pytest.raises(PolicyError, match="bad rule"):
        sb.network.allow("bad")
    with pytest.raises(ForbiddenError, match="ceiling"):
        sb.network.allow("far")


def test_remote_settings_are_checked(monkeypatch):
    monkeypatch.delenv("MVM_API_KEY", raising=False)
    monkeypatch.setenv("MVM_API_URL", "http://127.0.0.1:1")
    with pytest.raises(ValueError, match="api_key"):
        Sandbox.list()
    monkeypatch.delenv("MVM_API_URL")
    with pytest.raises(ValueError, match="plain http"):
        Sandbox.list(api_url="http://192.0.2.1:7070", api_key=KEY)
    with pytest.raises(ValueError, match="http"):
        Sandbox.list(api_url="ftp://127.0.0.1/", api_key=KEY)
    with pytest.raises(ValueError, match="control"):
        Sandbox.list(api_url="http://127.0.0.1:1", api_key="mvm_x\r\nX-Evil: 1")
    with pytest.raises(ApiConnectionError, match="cannot talk"):
        Sandbox.list(api_url="http://127.0.0.1:1", api_key=KEY)


def test_tls_is_verified_and_ca_file_trusts_the_operators_certificate(tmp_path):
    import ssl
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    p = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                        "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True)
    if p.returncode != 0:
        pytest.skip("openssl cannot make a certificate here")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    url = "https://127.0.0.1:%d" % srv.getsockname()[1]

    def loop():
        while True:
            try:
                raw, _ = srv.accept()
            except OSError:
                return
            try:
                with ctx.wrap_socket(raw, server_side=True) as c:
                    f = c.makefile("rb")
                    while f.readline() not in (b"\r\n", b""):
                        pass
                    answer(c, 200, {"sandboxes": [sandbox_row()]})
            except (ssl.SSLError, OSError):
                pass

    threading.Thread(target=loop, daemon=True).start()
    try:
        with pytest.raises(ApiConnectionError, match="TLS|CERTIFICATE|certificate"):
            Sandbox.list(api_url=url, api_key=KEY)
        assert [i.name for i in Sandbox.list(api_url=url, api_key=KEY, ca_file=str(cert))] == ["w1"]
    finally:
        srv.close()


def tar_of(members):
    """members: (name, data bytes | None for a directory | ("link", target))."""
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            if data is None:
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                t.addfile(ti)
            elif isinstance(data, tuple):
                ti.type, ti.linkname = tarfile.SYMTYPE, data[1]
                t.addfile(ti)
            else:
                ti.size, ti.mode = len(data), 0o644
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def test_trees_diff_and_promote_go_as_tar_and_text(fake, tmp_path):
    import io
    import tarfile
    bundle = tar_of([("changes.patch", b"+x\n"), ("report.json", json.dumps({"checks_passed": False, "checks": [{"passed": False}]}).encode()),
                     ("checks", None), ("checks/1.log", b"log\n")])
    tree = tar_of([("sub", None), ("sub/f", b"F"), ("in", ("link", "sub/f")), ("out", ("link", "/etc/passwd"))])

    def h(req, c):
        m, t = req["method"], req["target"]
        if m == "GET" and t == "/v1/sandboxes/w1":
            answer(c, 200, sandbox_row())
        elif m == "PUT" and t.startswith("/v1/sandboxes/w1/tree?"):
            answer(c, 200, {"path": "/tmp/in", "entries": 2, "bytes": 1})
        elif m == "GET" and t == "/v1/sandboxes/w1/diff?path=%2Fdata%2Fproj":
            answer(c, 200, b"+x\n", "text/x-diff")
        elif m == "POST" and t == "/v1/sandboxes/w1/promote":
            answer(c, 200, bundle, "application/x-tar")
        elif m == "POST" and t == "/v1/sandboxes/w1/exec":
            answer(c, 200, b'{"type":"exit","exit_code":0,"signal":null,"timed_out":false}\n', "application/x-ndjson")
        elif m == "GET" and t.startswith("/v1/sandboxes/w1/tree?"):
            answer(c, 200, tree, "application/x-tar")
        else:
            answer(c, 404, {"error": "no such path"})
    f = fake(h)
    sb = Sandbox.connect("w1")
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    (src / "d" / "x").write_text("X")
    sb.files.write_tree(str(src), "/tmp/in")
    put = f.requests[-1]
    assert put["target"] == "/v1/sandboxes/w1/tree?path=%2Ftmp%2Fin"
    assert put["headers"]["content-type"] == "application/x-tar"
    with tarfile.open(fileobj=io.BytesIO(put["body"])) as t:
        assert sorted(t.getnames()) == ["src", "src/d", "src/d/x"]     # as cp -r: lands at /tmp/in/src
    assert sb.diff("/data/proj") == "+x\n"
    rep = sb.promote(checks=["false"], out=str(tmp_path / "b"))
    assert json.loads(f.requests[-1]["body"]) == {"checks": ["false"]}
    assert rep.checks_passed is False and rep.patch == "+x\n" and (tmp_path / "b" / "checks" / "1.log").is_file()
    out = tmp_path / "out"
    out.mkdir()
    sb.files.read_tree("/srv/t", str(out))
    assert (out / "t" / "sub" / "f").read_text() == "F"
    assert (out / "t" / "in").is_symlink()
    assert not (out / "t" / "out").exists() and not (out / "t" / "out").is_symlink()   # it left the tree


def test_a_hostile_archive_writes_nothing(fake, tmp_path):
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        ti = tarfile.TarInfo("../evil")
        ti.size = 1
        t.addfile(ti, io.BytesIO(b"x"))

    def h(req, c):
        if req["method"] == "GET" and req["target"] == "/v1/sandboxes/w1":
            answer(c, 200, sandbox_row())
        else:
            answer(c, 200, buf.getvalue(), "application/x-tar")
    fake(h)
    sb = Sandbox.connect("w1")
    with pytest.raises(AgentError, match="unsafe"):
        sb.export("/x", str(tmp_path / "e"))
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_create_copy_goes_as_a_workspace_and_a_failure_removes_the_sandbox(fake, tmp_path):
    ws = tmp_path / "proj"
    ws.mkdir()
    (ws / "a.txt").write_text("A")
    calls = []

    def h(req, c):
        calls.append((req["method"], req["target"]))
        if req["method"] == "POST":
            answer(c, 201, sandbox_row())
        elif req["target"] == "/v1/sandboxes/w1/workspace?path=%2Fdata":
            answer(c, 409, {"error": "/data exists: a workspace is a new directory"})
        elif req["target"] == "/v1/sandboxes/w1/workspace?path=%2Fdata%2Fproj":
            answer(c, 201, {"path": "/data/proj", "entries": 1, "bytes": 1})
        elif req["target"] == "/v1/sandboxes/w2/workspace?path=%2Fw":
            answer(c, 400, {"error": "the archive: nope"})
        else:
            answer(c, 200, {"name": "w2", "removed": True})
    fake(h)
    Sandbox.create(name="w1", copy=[(str(ws), "/data/")])
    assert [t for m, t in calls if m == "PUT"] == ["/v1/sandboxes/w1/workspace?path=%2Fdata",
                                                   "/v1/sandboxes/w1/workspace?path=%2Fdata%2Fproj"]
    with pytest.raises(ApiError):
        Sandbox.create(name="w2", copy=[f"{ws}:/w"])
    assert calls[-1] == ("DELETE", "/v1/sandboxes/w2")


def test_export_leaves_git_out_and_nothing_goes_beneath_a_symlink(fake, tmp_path):
    tree = tar_of([("src", None), ("src/a", b"A"), (".git", None), (".git/config", b"[core]\n"),
                   ("g", ("link", ".git/config"))])
    bad = tar_of([("l", ("link", "src")), ("src", None), ("l/x", b"X")])

    def h(req, c):
        if req["method"] == "GET" and req["target"] == "/v1/sandboxes/w1":
            answer(c, 200, sandbox_row())
        else:
            answer(c, 200, bad if "bad" in req["target"] else tree, "application/x-tar")
    fake(h)
    sb = Sandbox.connect("w1")
    sb.export("/ok", str(tmp_path / "e"))
    assert sorted(os.listdir(tmp_path / "e")) == ["src"]
    with pytest.raises(AgentError, match="symlink"):
        sb.export("/bad", str(tmp_path / "b"))
    assert not (tmp_path / "b").exists() and sorted(os.listdir(tmp_path)) == ["e"]
