"""Drives `mvm serve` through Python's http.client (tests/integration/serve-api.sh).

usage: serve_client.py PORT ALICE_TOKEN BOB_TOKEN PHASE [SERVE_PID]
PHASE main: every verb as alice; bob sees none of it; quota, malformed and
oversized requests refused with JSON errors, nothing changed.
PHASE cut: an exec stream, then kill -9 of SERVE_PID mid-stream: the
client sees the stream end without its exit line (an error, not a hang).
PHASE after: after the restart the sandbox is still there, running, and
answers; then it is deleted.
PHASE slow: slow connections from 127.0.0.2 do not starve a client on 127.0.0.1.
$SERVE_TOKENS: the tokens file (main edits alice's disk quota, as an operator
would, and puts it back).
"""
import http.client
import io
import json
import tarfile
import os
import signal
import socket
import sys
import time

PORT, ALICE, BOB, PHASE = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def call(method, path, token=ALICE, body=None, raw=False, timeout=600):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    headers = {}
    if token is not None:
        headers["Authorization"] = "Bearer " + token
    if body is not None and not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    if raw:
        return r.status, data
    try:
        return r.status, json.loads(data)
    except ValueError:
        fail(f"{method} {path}: not JSON: {data[:200]!r}")


def expect(what, want, got):
    if want != got:
        fail(f"{what}: expected {want!r}, got {got!r}")


def expect_error(what, status, got):
    st, j = got
    expect(what + " status", status, st)
    if not isinstance(j, dict) or not isinstance(j.get("error"), str) or not j["error"]:
        fail(f"{what}: no JSON error: {j!r}")


def exec_lines(name, body, token=ALICE):
    """Run an exec, return its NDJSON lines (each parsed)."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
    c.request("POST", f"/v1/sandboxes/{name}/exec", body=json.dumps(body),
              headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    if r.status != 200:
        return r.status, [json.loads(r.read())]
    expect("exec content type", "application/x-ndjson", r.getheader("Content-Type"))
    expect("exec is chunked", "chunked", r.getheader("Transfer-Encoding"))
    lines = [json.loads(l) for l in r.read().decode().splitlines() if l]
    c.close()
    return 200, lines


def out_of(lines, kind):
    return "".join(l.get("data", "") for l in lines if l["type"] == kind)


def make_tar(members):
    """members: (name, kind, data_or_target, mode) with kind file|dir|symlink|chr|hardlink."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, kind, data, mode in members:
            ti = tarfile.TarInfo(name)
            ti.mode = mode
            if kind == "file":
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
                continue
            ti.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "chr": tarfile.CHRTYPE,
                       "hardlink": tarfile.LNKTYPE}[kind]
            if kind in ("symlink", "hardlink"):
                ti.linkname = data
            t.addfile(ti)
    return buf.getvalue()


def sh_out(cmd):
    st, lines = exec_lines("w1", {"command": cmd})
    expect("exec " + cmd, 200, st)
    return out_of(lines, "stdout")


def phase_trees():
    """Trees in and out as tar: the guest extracts, hostile archives change nothing, /tmp keeps 1777."""
    long = "d/" + "n" * 150 + "/f.txt"
    tar = make_tar([(".", "dir", None, 0o750), ("src", "dir", None, 0o755),
                    ("src/a.py", "file", b"print('a')\n", 0o644), ("bin/run", "file", b"#!/bin/sh\necho run\n", 0o755),
                    ("link", "symlink", "src/a.py", 0o777), ("same", "hardlink", "src/a.py", 0o644),
                    (long, "file", b"deep", 0o600)])
    st, j = call("PUT", "/v1/sandboxes/w1/tree?path=/tmp/proj", body=tar)
    expect("tree put (parents bin, d, d/n... added)", (200, 9), (st, j.get("entries", j)))
    expect("tree put: in the guest", "print('a')\nrun\nsrc/a.py\nprint('a')\ndeep750\n755\n",
           sh_out("cat /tmp/proj/src/a.py; sh /tmp/proj/bin/run; readlink /tmp/proj/link; cat /tmp/proj/same; "
                  f"cat /tmp/proj/{long}; stat -c '%a' /tmp/proj; stat -c '%a' /tmp/proj/bin/run"))
    # Into an existing directory: merged, and /tmp keeps its mode (1777) whatever the archive says.
    st, j = call("PUT", "/v1/sandboxes/w1/tree?path=/tmp", body=make_tar([(".", "dir", None, 0o700), ("t1", "file", b"1", 0o644)]))
    expect("tree put into /tmp", 200, st)
    expect("/tmp's mode kept, file there", "1777 1\n", sh_out("printf '%s ' $(stat -c %a /tmp); cat /tmp/t1; echo"))
    # Hostile archives: 400 with a reason, nothing written.
    for what, members in [("climbing", [("../../evil", "file", b"x", 0o644)]),
                          ("absolute", [("/evil", "file", b"x", 0o644)]),
                          ("device", [("ok", "file", b"x", 0o644), ("null", "chr", None, 0o666)]),
                          ("beneath a symlink", [("l", "symlink", "/", 0o777), ("l/evil", "file", b"x", 0o644)])]:
        expect_error("tree put: " + what, 400, call("PUT", "/v1/sandboxes/w1/tree?path=/tmp/h", body=make_tar(members)))
    expect_error("tree put: not a tar", 400, call("PUT", "/v1/sandboxes/w1/tree?path=/tmp/h", body=b"x" * 1024))
    expect("hostile archives wrote nothing", "none\n", sh_out("ls /evil /tmp/evil /tmp/h 2>/dev/null || echo none"))
    expect_error("tree put: missing parent", 404, call("PUT", "/v1/sandboxes/w1/tree?path=/no/such/dir", body=tar))
    expect_error("file put: missing parent", 404, call("PUT", "/v1/sandboxes/w1/files?path=/no/such/f", body=b"x"))
    expect("a missing parent made nothing", "none\n", sh_out("ls /no 2>/dev/null || echo none"))

    # Out: the guest's tree as a tar; a link leaving the tree and a FIFO are left out.
    sh_out("ln -s /etc/passwd /tmp/proj/out; mkfifo /tmp/proj/fifo")
    st, data = call("GET", "/v1/sandboxes/w1/tree?path=/tmp/proj", raw=True)
    expect("tree get", 200, st)
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        names = sorted(t.getnames())
        expect("tree get: names", sorted(["bin", "bin/run", "d", "d/" + "n" * 150, long, "link", "same", "src", "src/a.py"]), names)
        expect("tree get: content", b"#!/bin/sh\necho run\n", t.extractfile("bin/run").read())
        expect("tree get: mode", 0o755, t.getmember("bin/run").mode)
        expect("tree get: link", "src/a.py", t.getmember("link").linkname)
    st, data = call("GET", "/v1/sandboxes/w1/tree?path=/tmp/proj/src/a.py", raw=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        expect("tree get of a file", (["a.py"], b"print('a')\n"), (t.getnames(), t.extractfile("a.py").read()))
    expect_error("tree get: missing", 404, call("GET", "/v1/sandboxes/w1/tree?path=/no/such"))
    expect_error("tree get: relative", 400, call("GET", "/v1/sandboxes/w1/tree?path=tmp"))
    expect_error("bob tree get", 404, call("GET", "/v1/sandboxes/w1/tree?path=/tmp/proj", token=BOB))
    expect_error("bob tree put", 404, call("PUT", "/v1/sandboxes/w1/tree?path=/tmp/bob", token=BOB, body=tar))


def phase_results():
    """A workspace from a tar, then its diff and the promotion bundle as downloads."""
    ws = make_tar([("a.txt", "file", b"one\n", 0o644), ("src/m.py", "file", b"x = 1\n", 0o644)])
    st, j = call("PUT", "/v1/sandboxes/w1/workspace?path=/tmp/ws", body=ws)
    expect("workspace put", (201, 3), (st, j.get("entries", j)))
    expect_error("workspace over an existing directory", 409, call("PUT", "/v1/sandboxes/w1/workspace?path=/tmp/ws", body=ws))
    expect_error("workspace: hostile archive", 400,
                 call("PUT", "/v1/sandboxes/w1/workspace?path=/tmp/ws2", body=make_tar([("../x", "file", b"x", 0o644)])))
    sh_out("echo two >> /tmp/ws/a.txt; echo new > /tmp/ws/new.txt")
    st, patch = call("GET", "/v1/sandboxes/w1/diff", raw=True)
    expect("diff", 200, st)
    text = patch.decode()
    for want in ("a/a.txt", "+two", "new.txt", "+new"):
        if want not in text:
            fail(f"diff lacks {want!r}: {text[:400]!r}")
    if "m.py" in text:
        fail("diff names an unchanged file")
    expect("diff?path=", (200, patch), call("GET", "/v1/sandboxes/w1/diff?path=/tmp/ws", raw=True))
    st, data = call("POST", "/v1/sandboxes/w1/promote", body={"checks": ["test -f /tmp/ws/new.txt", "exit 3"]}, raw=True)
    expect("promote", 200, st)
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        expect("bundle members", ["changes.patch", "checks", "checks/1.log", "checks/2.log", "report.json"], sorted(t.getnames()))
        expect("bundle patch is the diff", patch, t.extractfile("changes.patch").read())
        rep = json.loads(t.extractfile("report.json").read())
        expect("bundle checks", [True, False], [ch["passed"] for ch in rep["checks"]])
    expect_error("promote: a host path", 400, call("POST", "/v1/sandboxes/w1/promote", body={"out": "/tmp/x"}))
    expect_error("bob diff", 404, call("GET", "/v1/sandboxes/w1/diff", token=BOB))
    expect_error("bob promote", 404, call("POST", "/v1/sandboxes/w1/promote", token=BOB, body={}))
    expect_error("bob workspace", 404, call("PUT", "/v1/sandboxes/w1/workspace?path=/tmp/b", token=BOB, body=ws))


def phase_templates():
    """A template of alice's sandbox is hers: bob neither sees, starts from, fetches nor removes it."""
    st, j = call("POST", "/v1/sandboxes/w1/template", body={"name": "t1"})
    expect("template made", (201, "t1"), (st, j.get("name", j)))
    expect_error("template: same name again", 409, call("POST", "/v1/sandboxes/w1/template", body={"name": "t1"}))
    expect_error("template: a bad name", 400, call("POST", "/v1/sandboxes/w1/template", body={"name": "../x"}))
    expect_error("bob: template of alice's sandbox", 404, call("POST", "/v1/sandboxes/w1/template", token=BOB, body={"name": "t1"}))
    names = [t["name"] for t in call("GET", "/v1/capacity")[1]["templates"]]
    if "t1" not in names:
        fail(f"alice's capacity does not list her template: {names!r}")
    names = [t["name"] for t in call("GET", "/v1/capacity", token=BOB)[1]["templates"]]
    if "t1" in names or "alice.t1" in names:
        fail(f"bob sees alice's template: {names!r}")
    for tpl in ("t1", "alice.t1"):
        expect_error(f"bob creates from {tpl}", 404, call("POST", "/v1/sandboxes", token=BOB, body={"name": "b1", "template": tpl}))
        expect_error(f"bob fetches {tpl}", 404, call("GET", f"/v1/templates/{tpl}", token=BOB))
        expect_error(f"bob removes {tpl}", 404, call("DELETE", f"/v1/templates/{tpl}", token=BOB))
    expect("bob made nothing", [], call("GET", "/v1/sandboxes", token=BOB)[1]["sandboxes"])
    st, j = call("POST", "/v1/sandboxes", body={"name": "w2", "template": "t1"})
    expect("create from her template", (201, "running"), (st, j.get("status", j)))
    expect("the template's files", "print('a')\n", "".join(l.get("data", "") for l in exec_lines("w2", {"command": "cat /tmp/proj/src/a.py"})[1] if l["type"] == "stdout"))
    expect("delete w2", 200, call("DELETE", "/v1/sandboxes/w2")[0])
    template_disk_quota()
    expect("template removed", 200, call("DELETE", "/v1/templates/t1")[0])
    expect_error("template gone", 404, call("POST", "/v1/sandboxes", body={"name": "w2", "template": "t1"}))


def set_alice_disk(disk):
    set_alice("disk", disk)


def set_alice(key, value):
    """Rewrite one of alice's quotas in the tokens file (0600, replaced whole): the server rereads it."""
    path = os.environ["SERVE_TOKENS"]
    with open(path) as f:
        tokens = json.load(f)
    tokens["tenants"]["alice"][key] = value
    tmp = path + ".new"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(tokens, f)
    os.replace(tmp, path)


def template_store():
    d = os.environ.get("MVM_TEMPLATE_DIR")
    if d:
        return d
    data = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(data, "mvm", "templates")


def template_disk_quota():
    """Her templates' bytes are in her disk; one that cannot fit is refused before it is made."""
    st, j = call("GET", "/v1/capacity")
    used, quota = j["tenant"]["used"], j["tenant"]["quota"]
    expect("capacity: templates held", 1, used["templates"])
    sandbox_disk = call("GET", "/v1/sandboxes/w1")[1]["disk"]
    if used["disk"] <= sandbox_disk:
        fail(f"the template's bytes are not in the disk used: {used['disk']} for a {sandbox_disk} byte sandbox")
    # Room for 512 MiB more: a template of w1 may hold its memory and whole disk (more than that).
    set_alice_disk(used["disk"] + (512 << 20))
    st, j = call("POST", "/v1/sandboxes/w1/template", body={"name": "t2"})
    expect_error("template past the disk quota", 429, (st, j))
    if "quota" not in j["error"] or "disk" not in j["error"]:
        fail("template disk refusal does not say so: " + j["error"])
    store = template_store()
    left = [n for n in os.listdir(store) if "alice.t2" in n] if os.path.isdir(store) else []
    expect("the refused template left nothing in the store", [], left)
    expect_error("the refused template does not exist", 404, call("POST", "/v1/sandboxes", body={"name": "w3", "template": "t2"}))
    set_alice_disk(quota["disk"])
    expect("the quota back", quota["disk"], call("GET", "/v1/capacity")[1]["tenant"]["quota"]["disk"])


def checkpoint_quota(before):
    """A checkpoint counts in the tenant's use (one more, its bytes in the disk); past the count or
    the disk the next is refused with 429 before the VMM writes anything."""
    st, j = call("GET", "/v1/capacity")
    used, quota = j["tenant"]["used"], j["tenant"]["quota"]
    expect("capacity: checkpoints held", (before["checkpoints"] + 1, 32), (used["checkpoints"], quota["checkpoints"]))
    if used["disk"] < before["disk"] + (1 << 20):
        fail(f"the checkpoint's memory file and frozen layer are not in the disk used: {before['disk']} -> {used['disk']}")
    set_alice("checkpoints", used["checkpoints"])
    st, j = call("POST", "/v1/sandboxes/w1/checkpoints", body={"tag": "c2"})
    expect_error("checkpoint past the count", 429, (st, j))
    if "quota" not in j["error"] or "checkpoints" not in j["error"]:
        fail("checkpoint count refusal does not say so: " + j["error"])
    set_alice("checkpoints", quota["checkpoints"])
    # Room for less than its memory and whole disk.
    set_alice_disk(used["disk"] + (16 << 20))
    st, j = call("POST", "/v1/sandboxes/w1/checkpoints", body={"tag": "c2"})
    expect_error("checkpoint past the disk", 429, (st, j))
    if "quota" not in j["error"] or "disk" not in j["error"]:
        fail("checkpoint disk refusal does not say so: " + j["error"])
    set_alice_disk(quota["disk"])
    expect("the refusals took none", ["c1"], [c["tag"] for c in call("GET", "/v1/sandboxes/w1/checkpoints")[1]["checkpoints"]])


def phase_main():
    # Unauthenticated: 401 everywhere but the health probe; no trace.
    expect("health", 200, call("GET", "/v1/health", token=None)[0])
    expect_error("no token", 401, call("GET", "/v1/sandboxes", token=None))
    expect_error("wrong token", 401, call("POST", "/v1/sandboxes", token="mvm_" + "0" * 64, body={"name": "w1"}))
    expect_error("bob's token with a byte changed", 401, call("GET", "/v1/sandboxes", token=BOB[:-1] + ("0" if BOB[-1] != "0" else "1")))
    expect("nothing created by a refused token", [], call("GET", "/v1/sandboxes")[1]["sandboxes"])

    # Malformed creates: 400 with a reason, nothing made.
    expect_error("create: not JSON", 400, call("POST", "/v1/sandboxes", body="{nope"))
    expect_error("create: unknown key", 400, call("POST", "/v1/sandboxes", body={"name": "w1", "kernel": "/etc/passwd"}))
    expect_error("create: image as a host path", 400, call("POST", "/v1/sandboxes", body={"name": "w1", "image": "/etc/passwd"}))
    expect_error("create: no such image", 404, call("POST", "/v1/sandboxes", body={"name": "w1", "image": "passwd"}))
    expect_error("create: bad name", 400, call("POST", "/v1/sandboxes", body={"name": "../x"}))
    expect_error("create: body too large", 413, call("POST", "/v1/sandboxes", body=b"{" + b" " * (300 << 10) + b"}"))
    expect("nothing created by malformed requests", [], call("GET", "/v1/sandboxes")[1]["sandboxes"])

    expect_error("create: rule over the ceiling", 403, call("POST", "/v1/sandboxes", body={"name": "w1", "allow": ["host-loopback"]}))
    st, j = call("POST", "/v1/sandboxes", body={"name": "w1", "cpus": 1, "memory": "256M", "env": {"GREETING": "hello"},
                                                "allow": ["example.org:443"]})
    expect("create", 201, st)
    expect("create name", "w1", j["name"])
    expect("create status", "running", j["status"])
    expect("create memory", 256 << 20, j["memory"])
    st, j = call("GET", "/v1/sandboxes/w1")
    expect("get", (200, "running"), (st, j["status"]))
    expect("list", ["w1"], [s["name"] for s in call("GET", "/v1/sandboxes")[1]["sandboxes"]])
    expect_error("create: same name again", 409, call("POST", "/v1/sandboxes", body={"name": "w1"}))
    # vCPUs and memory over the tenant's quota (8 and 8 GiB; w1 holds 1 and 256 MiB): 429 naming
    # the limit, refused before anything boots.
    for body, word in [({"name": "w9", "cpus": 8}, "vCPUs"), ({"name": "w9", "memory": "8G"}, "memory")]:
        st, j = call("POST", "/v1/sandboxes", body=body)
        expect_error(f"create over the {word} quota", 429, (st, j))
        if "quota" not in j["error"] or word not in j["error"]:
            fail(f"{word} quota refusal does not say so: " + j["error"])
    expect("quota refusals made nothing", ["w1"], [s["name"] for s in call("GET", "/v1/sandboxes")[1]["sandboxes"]])

    # exec: argv form, both streams, the exit code last; the create's env.
    st, lines = exec_lines("w1", {"cmd": ["sh", "-c", "echo out; echo err >&2; echo $GREETING; exit 3"]})
    expect("exec status", 200, st)
    expect("exec stdout", "out\nhello\n", out_of(lines, "stdout"))
    expect("exec stderr", "err\n", out_of(lines, "stderr"))
    expect("exec last line", {"type": "exit", "exit_code": 3, "signal": None, "timed_out": False}, lines[-1])
    st, lines = exec_lines("w1", {"command": "printf '\\377\\000x'", "env": {"X": "1"}})
    b64 = [l for l in lines if l["type"] == "stdout"]
    if not b64 or "base64" not in b64[0]:
        fail(f"binary output not base64: {lines!r}")
    st, lines = exec_lines("w1", {"cmd": ["sh", "-c", "tr a-z A-Z; echo done"], "stdin": "hello\n"})
    expect("exec stdin", "HELLO\ndone\n", out_of(lines, "stdout"))
    st, lines = exec_lines("w1", {"command": "exit 0", "cwd": "relative"})
    expect_error("exec: relative cwd", 400, (st, lines[0]))
    st, lines = exec_lines("w1", {"cmd": ["sh", "-c", "sleep 30"], "timeout": 1})
    if lines[-1].get("type") != "exit" or not lines[-1]["timed_out"]:
        fail(f"exec timeout: {lines[-1]!r}")

    # Files: binary round trip; a missing directory is an error.
    blob = os.urandom(300000)
    st, j = call("PUT", "/v1/sandboxes/w1/files?path=/tmp/blob", body=blob)
    expect("put", (200, len(blob)), (st, j.get("bytes")))
    st, data = call("GET", "/v1/sandboxes/w1/files?path=/tmp/blob", raw=True)
    expect("get file", 200, st)
    if data != blob:
        fail("file changed in the round trip")
    expect_error("get: missing path", 400, call("GET", "/v1/sandboxes/w1/files"))
    expect_error("get: relative path", 400, call("GET", "/v1/sandboxes/w1/files?path=tmp/blob"))
    st, j = call("GET", "/v1/sandboxes/w1/files?path=/no/such")
    if st < 400 or "error" not in j:
        fail(f"get of a missing file: {st} {j!r}")

    phase_trees()
    phase_results()
    phase_templates()

    # Fork: a running copy with the file; then alice is at her quota (2 sandboxes).
    st, j = call("POST", "/v1/sandboxes/w1/fork", body={"name": "w2"})
    expect("fork", (201, "w2", "running"), (st, j.get("name"), j.get("status")))
    st, lines = exec_lines("w2", {"command": "wc -c < /tmp/blob"})
    expect("fork has the file", f"{len(blob)}\n", out_of(lines, "stdout"))
    expect_error("bob fork", 404, call("POST", "/v1/sandboxes/w1/fork", token=BOB, body={"name": "x"}))
    st, j = call("POST", "/v1/sandboxes", body={"name": "w3"})
    expect_error("quota", 429, (st, j))
    if "quota" not in j["error"]:
        fail("quota refusal does not say so: " + j["error"])
    expect_error("fork over quota", 429, call("POST", "/v1/sandboxes/w1/fork", body={"name": "w3"}))
    expect("quota refusals left nothing", ["w1", "w2"], [s["name"] for s in call("GET", "/v1/sandboxes")[1]["sandboxes"]])
    expect("delete the fork", 200, call("DELETE", "/v1/sandboxes/w2")[0])

    # Bob: alice's sandbox does not exist for him, whatever he tries.
    expect("bob's list", [], call("GET", "/v1/sandboxes", token=BOB)[1]["sandboxes"])
    expect_error("bob get", 404, call("GET", "/v1/sandboxes/w1", token=BOB))
    st, lines = exec_lines("w1", {"cmd": ["true"]}, token=BOB)
    expect_error("bob exec", 404, (st, lines[0]))
    expect_error("bob read", 404, call("GET", "/v1/sandboxes/w1/files?path=/tmp/blob", token=BOB))
    expect_error("bob write", 404, call("PUT", "/v1/sandboxes/w1/files?path=/tmp/x", token=BOB, body=b"x"))
    expect_error("bob checkpoint", 404, call("POST", "/v1/sandboxes/w1/checkpoints", token=BOB, body=""))
    expect_error("bob stop", 404, call("POST", "/v1/sandboxes/w1/stop", token=BOB))
    expect_error("bob delete", 404, call("DELETE", "/v1/sandboxes/w1", token=BOB))
    expect_error("bob by host name", 404, call("GET", "/v1/sandboxes/alice.w1", token=BOB))
    expect("alice's sandbox untouched", "running", call("GET", "/v1/sandboxes/w1")[1]["status"])

    # Checkpoint, change, rollback: the change is gone.
    before = call("GET", "/v1/capacity")[1]["tenant"]["used"]
    st, j = call("POST", "/v1/sandboxes/w1/checkpoints", body={"tag": "c1"})
    expect("checkpoint", 201, st)
    st, j = call("GET", "/v1/sandboxes/w1/checkpoints")
    expect("checkpoints", ["c1"], [c["tag"] for c in j["checkpoints"]])
    checkpoint_quota(before)
    call("PUT", "/v1/sandboxes/w1/files?path=/tmp/after", body=b"later")
    st, j = call("POST", "/v1/sandboxes/w1/rollback", body={"tag": "c1"})
    expect("rollback", 200, st)
    st, lines = exec_lines("w1", {"command": "test -e /tmp/after; echo $?"})
    expect("rolled back", "1\n", out_of(lines, "stdout"))

    # Stop and start: the guest's disk survives (the /data disk).
    call("PUT", "/v1/sandboxes/w1/files?path=/data/kept", body=b"kept")
    st, j = call("POST", "/v1/sandboxes/w1/stop")
    expect("stop", (200, "stopped"), (st, j["status"]))
    st, lines = exec_lines("w1", {"cmd": ["true"]})
    expect_error("exec when stopped", 409, (st, lines[0]))
    st, j = call("POST", "/v1/sandboxes/w1/start")
    expect("start", (200, "running"), (st, j["status"]))
    st, data = call("GET", "/v1/sandboxes/w1/files?path=/data/kept", raw=True)
    expect("disk kept across stop/start", (200, b"kept"), (st, data))

    # Network rules: shown, one added, one over the ceiling refused.
    st, j = call("GET", "/v1/sandboxes/w1/network")
    expect("network show", 200, st)
    if not any("example.org" in r for r in j.get("allow", [])):
        fail(f"network show: {j!r}")
    expect_error("network: over the ceiling", 403, call("POST", "/v1/sandboxes/w1/network", body={"allow": "10.0.0.0/8"}))
    expect_error("network: two verbs", 400, call("POST", "/v1/sandboxes/w1/network", body={"allow": "a.example", "deny": "b.example"}))
    st, j = call("POST", "/v1/sandboxes/w1/network", body={"allow": "example.com:443"})
    expect("network allow", 200, st)
    if not any("example.com" in r for r in j.get("allow", [])):
        fail(f"network allow: {j!r}")
    expect_error("bob network", 404, call("POST", "/v1/sandboxes/w1/network", token=BOB, body={"allow": "example.net"}))
    # Removal: never by another tenant; by alice, gone from the rules the VMM enforces, the rest kept.
    expect_error("bob network remove", 404, call("POST", "/v1/sandboxes/w1/network", token=BOB, body={"remove": "example.com:443"}))
    if not any("example.com" in r for r in call("GET", "/v1/sandboxes/w1/network")[1].get("allow", [])):
        fail("bob's refused remove took alice's rule")
    st, j = call("POST", "/v1/sandboxes/w1/network", body={"remove": "example.com:443"})
    expect("network remove", 200, st)
    st, j = call("GET", "/v1/sandboxes/w1/network")
    allow = j.get("allow", [])
    if st != 200 or any("example.com" in r for r in allow) or not any("example.org" in r for r in allow):
        fail(f"network after remove: {st} {j!r}")
    st, j = call("POST", "/v1/sandboxes/w1/network", body={"remove": "example.com:443"})
    if not 400 <= st < 500 or "error" not in j:
        fail(f"removing a rule that is not there: {st} {j!r}")
    # Events: the sandbox's lifecycle as JSON lines.
    st, data = call("GET", "/v1/sandboxes/w1/events", raw=True)
    types = [json.loads(l)["type"] for l in data.decode().splitlines() if l]
    if st != 200 or "created" not in types or "stopped" not in types:
        fail(f"events: {st} {types!r}")

    # Capacity for a scheduler, and this tenant's use.
    st, j = call("GET", "/v1/capacity")
    expect("capacity", 200, st)
    expect("capacity: running", True, j["host"]["sandboxes_running"] >= 1)
    expect("capacity: tenant use", 1, j["tenant"]["used"]["sandboxes"])


def phase_cut(pid):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    c.request("POST", "/v1/sandboxes/w1/exec", body=json.dumps({"command": "echo started; sleep 60; echo never"}),
              headers={"Authorization": "Bearer " + ALICE})
    r = c.getresponse()
    expect("cut: status", 200, r.status)
    first = json.loads(r.readline())
    expect("cut: first line", {"type": "stdout", "data": "started\n"}, first)
    os.kill(pid, signal.SIGKILL)
    try:
        rest = r.read()
        lines = [json.loads(l) for l in rest.decode().splitlines() if l]
        if any(l["type"] == "exit" for l in lines):
            fail("the cut stream ended with an exit line")
        fail(f"the cut stream ended cleanly: {rest!r}")
    except http.client.IncompleteRead:
        pass
    except (ConnectionError, http.client.HTTPException):
        pass


def phase_after():
    st, j = call("GET", "/v1/sandboxes/w1")
    expect("after restart: get", (200, "running"), (st, j["status"]))
    st, lines = exec_lines("w1", {"command": "echo alive"})
    expect("after restart: exec", "alive\n", out_of(lines, "stdout"))
    st, j = call("DELETE", "/v1/sandboxes/w1")
    expect("delete", (200, True), (st, j.get("removed")))
    expect_error("get after delete", 404, call("GET", "/v1/sandboxes/w1"))
    expect("list after delete", [], call("GET", "/v1/sandboxes")[1]["sandboxes"])


def phase_slow():
    socks = []
    for _ in range(64):  # twice the per-IP limit, each a request head that never ends
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        try:
            s.connect(("127.0.0.1", PORT))
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            pass
        socks.append(s)
    st, j = call("GET", "/v1/sandboxes", timeout=30)
    expect("a normal client beside 64 slow connections", 200, st)
    for s in socks:
        s.close()


if PHASE == "main":
    phase_main()
elif PHASE == "cut":
    phase_cut(int(sys.argv[5]))
elif PHASE == "after":
    phase_after()
elif PHASE == "slow":
    phase_slow()
else:
    fail("unknown phase " + PHASE)
print("ok " + PHASE)
