#!/usr/bin/env python3
"""make bench-serve: `mvm serve` under concurrent clients, beside the same
operations done locally, in one run (issue 28).

N client threads (MVM_BENCH_CLIENTS, default 4), each for R rounds
(MVM_BENCH_ROUNDS, default 3), loopback only:
  api    POST /v1/sandboxes {"template"} -> POST .../exec {"cmd":["true"]}
         (NDJSON to its exit line) -> DELETE
  local  `mvm create --template` -> the SDK's commands.run("true") (its local
         mode: the agent over vsock.sock) -> the SDK's kill() (`mvm rm -f`)
The two series alternate round by round, so the box's slow and fast
stretches hit both alike. The tenant's quota is smaller than the clients
(MVM_BENCH_QUOTA, default clients - 1), so some creates are refused: each
refusal must be a 429/503 with a JSON reason and leave no sandbox; each
201 must be a working sandbox. Reports requests per second, p50/p99 per
verb and the api/local ratio of whole create-exec-delete cycles. The clock
is the box's wall clock: only the ratio within this run means anything.
"""
import http.client, json, os, statistics, subprocess, sys, tempfile, threading, time

CLIENTS = int(os.environ.get("MVM_BENCH_CLIENTS", "4"))
ROUNDS = int(os.environ.get("MVM_BENCH_ROUNDS", "3"))
QUOTA = int(os.environ.get("MVM_BENCH_QUOTA", str(max(1, CLIENTS - 1))))
MVM = os.path.abspath(os.environ.get("MVM", "build/mvm"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../sdk/python"))
SB_OPTS = ["--net", "none", "--memory", "256M", "--disk-size", "64M"]
lock = threading.Lock()
times = {}          # (series, verb) -> [seconds]
refused, problems = [], []


def mvm(*args):
    p = subprocess.run([MVM, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode:
        sys.exit(f"bench-serve: mvm {' '.join(args)}: {p.stderr.decode(errors='replace')[-600:]}")
    return p.stdout.decode()


def note(series, verb, t0):
    with lock:
        times.setdefault((series, verb), []).append(time.monotonic() - t0)


def call(port, token, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def api_cycle(port, token, name):
    t0 = time.monotonic()
    st, data = call(port, token, "POST", "/v1/sandboxes", {"name": name, "template": "tpl"})
    if st in (429, 503):
        reason = json.loads(data).get("error", "")
        with lock:
            refused.append((st, reason))
        if not reason:
            problems.append(f"{name}: refusal {st} without a reason")
        if mvm("ls", "--json").count(f'"bench.{name}"'):
            problems.append(f"{name}: refused ({st}) but a sandbox was left")
        return False
    if st != 201:
        problems.append(f"{name}: create {st} {data[:200]!r}")
        return False
    note("api", "create", t0)
    t1 = time.monotonic()
    st, data = call(port, token, "POST", f"/v1/sandboxes/{name}/exec", {"cmd": ["true"]})
    last = data.decode(errors="replace").strip().splitlines()[-1:] or [""]
    if st != 200 or '"exit_code":0' not in last[0]:
        problems.append(f"{name}: exec {st} {last[0][:200]!r}")
    note("api", "exec", t1)
    t2 = time.monotonic()
    st, data = call(port, token, "DELETE", f"/v1/sandboxes/{name}")
    if st != 200:
        problems.append(f"{name}: delete {st} {data[:200]!r}")
    note("api", "delete", t2)
    note("api", "cycle", t0)
    return True


def local_cycle(name):
    from mvm import Sandbox
    t0 = time.monotonic()
    p = subprocess.run([MVM, "create", name, "--template", "tpl"], capture_output=True)
    if p.returncode:
        problems.append(f"{name}: local create: {p.stderr.decode(errors='replace')[-200:]}")
        return
    note("local", "create", t0)
    sb = Sandbox.connect(name)
    t1 = time.monotonic()
    if sb.commands.run("true").exit_code != 0:
        problems.append(f"{name}: local exec failed")
    note("local", "exec", t1)
    t2 = time.monotonic()
    sb.kill()
    note("local", "delete", t2)
    note("local", "cycle", t0)


def client(i, port, token, gate):
    for r in range(ROUNDS):
        gate[r].wait()
        api_cycle(port, token, f"c{i}r{r}")
        gate[ROUNDS + r].wait()
        if i < QUOTA:       # the same number of sandboxes at once as the API allows
            local_cycle(f"l{i}r{r}")


def serve_up(d, port):
    tok = os.path.join(d, "tokens.json")
    token = mvm("serve", "token", "add", "bench", "--tokens", tok, "--sandboxes", str(QUOTA)).strip()
    srv = subprocess.Popen([MVM, "serve", "--listen", f"127.0.0.1:{port}", "--tokens", tok,
                            "--log", os.path.join(d, "requests.jsonl"), "--rate", "1000", "--burst", "1000"],
                           stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "serve.err"), "w"))
    end = time.monotonic() + 60
    while True:
        try:
            if call(port, token, "GET", "/v1/health")[0] == 200:
                return srv, token
        except OSError:
            pass
        if srv.poll() is not None or time.monotonic() > end:
            sys.exit("bench-serve: mvm serve did not come up: " + open(os.path.join(d, "serve.err")).read())
        time.sleep(0.2)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    d = tempfile.mkdtemp(prefix="mvm-bench-serve.")
    os.environ["MVM_STATE_DIR"] = os.path.join(d, "state")
    os.environ["MVM_TEMPLATE_DIR"] = os.path.join(d, "templates")
    os.environ["MVM_BIN"] = MVM      # the SDK's local mode runs this mvm
    import socket
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    mvm("create", "src", *SB_OPTS)
    mvm("template", "create", "tpl", "--from", "src")
    mvm("rm", "-f", "src")
    srv, token = serve_up(d, port)
    gate = [threading.Barrier(CLIENTS) for _ in range(2 * ROUNDS)]
    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(i, port, token, gate)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    srv.terminate()
    srv.wait()
    left = [r["name"] for r in json.loads(mvm("ls", "--json"))]
    if left:
        problems.append(f"sandboxes left behind: {left}")
    requests = sum(len(v) for k, v in times.items() if k[1] != "cycle") + len(refused)
    print(f"bench-serve: {CLIENTS} clients x {ROUNDS} rounds, tenant quota {QUOTA} sandboxes, "
          f"box wall clock (emulated: ratios only)")
    print(f"{'series':7} {'verb':7} {'n':>3} {'p50 s':>8} {'p99 s':>8}")
    for (series, verb), v in sorted(times.items()):
        print(f"{series:7} {verb:7} {len(v):3d} {statistics.median(v):8.3f} {pct(v, 99):8.3f}")
    print(f"api requests: {requests} in {wall:.1f} s of both series ({requests / wall:.2f}/s); "
          f"refused creates: {len(refused)}")
    for why in sorted({f"{st} {reason}" for st, reason in refused}):
        print(f"  refused: {why}")
    if ("api", "cycle") in times and ("local", "cycle") in times:
        r = statistics.median(times[("api", "cycle")]) / statistics.median(times[("local", "cycle")])
        print(f"api / local, create+exec+delete p50: {r:.3f}x")
    subprocess.run([MVM, "template", "rm", "--force", "tpl"], capture_output=True)
    if problems:
        sys.exit("bench-serve: FAILED:\n  " + "\n  ".join(problems))


if __name__ == "__main__":
    main()
