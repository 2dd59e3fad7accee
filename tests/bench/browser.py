#!/usr/bin/env python3
"""make bench-browser: a browser sandbox beside Chromium started directly on
the host (the peer), in the same run, as ratios (issue 17).

Per round (MVM_BENCH_ROUNDS, default 3: Chromium is slow under emulation),
interleaved so the box's slow and fast stretches hit both alike, both headless:
  start->CDP    mvm: `mvm create --image browser` + `mvm browser --headless`
                until it returns (CDP answered through the relay);
                host: `chromium --headless` spawned until /json/version answers
  CDP->page     puppeteer-core connects ({browserURL}) and loads a test page
                (a data: URL, no network on either side) until "load"
  peak memory   the largest sum over the sandbox's host processes (VMM + relay)
                / over Chromium's process tree, sampled every 100 ms, of their
                PSS (RSS with shared pages split among the sharers: a plain
                RSS sum counts Chromium's shared libraries once per process)
mvm's numbers include booting a whole guest; the host peer has no isolation.
The peer needs Debian's chromium on the host (tools/deps.sh browser-peer).
"""
import json, os, shutil, signal, statistics, subprocess, sys, tempfile, threading, time
import urllib.request

ROUNDS = int(os.environ.get("MVM_BENCH_ROUNDS", "3"))
MVM = os.path.abspath(os.environ.get("MVM", "build/mvm"))
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "browser", "cdp-check.mjs")
PAGE = "data:text/html,<title>bench</title><h1 id=answer>bench page</h1>" + "<p>x</p>" * 200
SB_OPTS = ["--image", "browser", "--memory", "1536M", "--cpus", "2", "--net", "none"]


def mvm(*args):
    p = subprocess.run([MVM, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode:
        sys.exit(f"bench-browser: mvm {' '.join(args)}: {p.stderr.decode(errors='replace')[-800:]}")
    return p.stdout.decode()


def pss_kib(pid):
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def tree_rss_kib(root_pids):
    """Sum of PSS over @root_pids and all their descendants."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            st = open(f"/proc/{d}/stat").read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
            kids.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError):
            pass
    total, todo, seen = 0, list(root_pids), set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += pss_kib(p)
        todo += kids.get(p, [])
    return total


class Peak:
    """Samples tree_rss_kib(pids()) every 100 ms until stopped; keeps the max."""
    def __init__(self, pids):
        self.pids, self.peak, self.stop = pids, 0, threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.wait(0.1):
            self.peak = max(self.peak, tree_rss_kib(self.pids()))

    def done(self):
        self.stop.set()
        self.t.join()
        return self.peak


def load_page(cdp):
    t = time.monotonic()
    p = subprocess.run(["node", CLIENT, "load", cdp, PAGE], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=900)
    out = p.stdout.decode()
    if p.returncode or '"error":null' not in out:
        sys.exit(f"bench-browser: page load failed: {out} {p.stderr.decode()[-800:]}")
    return time.monotonic() - t


def mvm_pids(name):
    state = os.environ["MVM_STATE_DIR"]
    pids = []
    for f, key in (("pid", None), ("relay.json", "pid")):
        try:
            text = open(os.path.join(state, name, f)).read()
            pids.append(int(json.loads(text)[key] if key else text))
        except (OSError, ValueError, KeyError):
            pass
    return pids


def round_mvm(r):
    name = f"bb{r}"
    peak = Peak(lambda: mvm_pids(name))
    t = time.monotonic()
    mvm("create", name, *SB_OPTS)
    ep = json.loads(mvm("browser", "--headless", "--json", name))
    start = time.monotonic() - t
    page = load_page(ep["cdp"])
    rss = peak.done()
    mvm("rm", "-f", name)
    return start, page, rss


def round_host(chromium, tmp):
    ud = tempfile.mkdtemp(dir=tmp)
    # Chromium keeps its sandbox only as an unprivileged user (as in the guest).
    drop = []
    if os.getuid() == 0:
        os.chown(ud, 65534, 65534)
        drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "HOME=" + ud]
    t = time.monotonic()
    p = subprocess.Popen([*drop, chromium, "--headless=new", "--remote-debugging-port=0", f"--user-data-dir={ud}",
                          "--no-first-run", "--no-default-browser-check", "about:blank"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    peak = Peak(lambda: [p.pid])
    port_file, cdp = os.path.join(ud, "DevToolsActivePort"), None
    while time.monotonic() - t < 600:
        try:
            port = open(port_file).read().split()[0]
            cdp = f"http://127.0.0.1:{port}"
            urllib.request.urlopen(cdp + "/json/version", timeout=30).read()
            break
        except (OSError, IndexError, ValueError):
            cdp = None
            time.sleep(0.05)
    if not cdp:
        sys.exit("bench-browser: the host's Chromium did not answer CDP")
    start = time.monotonic() - t
    page = load_page(cdp)
    rss = peak.done()
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    shutil.rmtree(ud, ignore_errors=True)
    return start, page, rss


def main():
    chromium = shutil.which("chromium")
    if not chromium:
        sys.exit("bench-browser: no chromium on the host for the peer (tools/deps.sh browser-peer)")
    tmp = tempfile.mkdtemp(prefix="mvm-bench-browser.")
    os.chmod(tmp, 0o755)
    os.environ["MVM_STATE_DIR"] = os.path.join(tmp, "state")
    res = {"mvm": [], "host": []}
    try:
        for r in range(ROUNDS):
            order = [("mvm", lambda: round_mvm(r)), ("host", lambda: round_host(chromium, tmp))]
            for label, fn in (order if r % 2 == 0 else order[::-1]):
                res[label].append(fn())
            print(f"bench-browser: round {r + 1}/{ROUNDS}: " + ", ".join(
                f"{k} start {v[-1][0]:.1f}s page {v[-1][1]:.1f}s pss {v[-1][2] / 1024:.0f}M"
                for k, v in res.items()), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nbrowser benchmark: {ROUNDS} interleaved rounds, headless, data: test page")
    print(f"{'':<28} {'mvm (median)':>14} {'host (median)':>14} {'mvm / host':>11}")
    for i, (label, unit, scale) in enumerate((("create -> CDP answers", "s", 1),
                                              ("CDP -> test page loaded", "s", 1),
                                              ("peak host PSS", "MiB", 1 / 1024))):
        m = statistics.median(x[i] for x in res["mvm"]) * scale
        h = statistics.median(x[i] for x in res["host"]) * scale
        ratio = statistics.median(a[i] / b[i] for a, b in zip(res["mvm"], res["host"]))
        print(f"{label + ' (' + unit + ')':<28} {m:14.1f} {h:14.1f} {ratio:10.2f}x")


if __name__ == "__main__":
    main()
