#!/usr/bin/env python3
"""make bench-start: how fast a new sandbox is ready, cold and from a template,
beside QEMU microvm (same kernel, same initrd, same run), and how many fit.

Per round (MVM_BENCH_ROUNDS, default 20, interleaved so the box's slow and
fast stretches hit every series alike), wall time taken by this script:
  mvm cold      `mvm create` (boot) returns, then `mvm exec NAME -- true` returns
  mvm template  `mvm create --template` returns, then `mvm exec NAME -- true`
  qemu cold     QEMU microvm from process start to the guest init (isa-debug-exit
                on mvm's boot-timer port)
  qemu restore  QEMU with -incoming from a file its own `migrate` wrote, from
                process start until QMP says "running"
Density: 16 idle sandboxes of 256 MiB from one template vs 16 cold ones: the
total PSS of their VMM processes (/proc/PID/smaps_rollup) and the drop in
MemAvailable, with the marginal PSS of each sandbox after the first.
Targets (issue 18): template create-to-first-exec <= 0.1x cold mvm and <= 0.5x
QEMU restore-to-running; marginal PSS from a template <= 15% of a cold one's.
"""
import json, os, shutil, socket, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qmp import Qmp  # noqa: E402

ROUNDS = int(os.environ.get("MVM_BENCH_ROUNDS", "20"))
DENSITY = int(os.environ.get("MVM_BENCH_DENSITY", "16"))
MVM = os.path.abspath(os.environ.get("MVM", "build/mvm"))
GUEST = os.environ.get("MVM_GUEST_DIR", os.path.join(os.path.dirname(MVM), "guest"))
KERNEL = os.path.join(GUEST, "vmlinux")
MEM = "256M"
SB_OPTS = ["--net", "none", "--memory", MEM, "--disk-size", "64M"]
CMDLINE = ("console=ttyS0 quiet reboot=k panic=-1 nomodule 8250.nr_uarts=1 swiotlb=noforce "
           "cryptomgr.notests tsc=reliable no_timer_check io_delay=none")


def mvm(*args, check=True):
    p = subprocess.run([MVM, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and p.returncode:
        sys.exit(f"bench-start: mvm {' '.join(args)}: {p.stderr.decode(errors='replace')[-800:]}")
    return p.stdout.decode()


def create_exec(name, *opts):
    t = time.monotonic()
    mvm("create", name, *opts)
    mvm("exec", name, "--", "true")
    return time.monotonic() - t


def qemu_base(initrd, extra):
    return ["qemu-system-x86_64", "-M", "microvm,acpi=off,rtc=off", "-accel", "kvm",
            "-cpu", "host", "-m", MEM, "-smp", "1", "-nodefaults", "-no-user-config",
            "-nographic", "-display", "none", "-serial", "null",
            "-kernel", KERNEL, "-initrd", initrd, "-append", CMDLINE,
            "-chardev", "null,id=e", "-device", "virtio-serial-device",
            "-device", "virtconsole,chardev=e", "-no-reboot", *extra]


def qemu_saved_state(d, initrd):
    """A running guest, saved by QEMU's own migrate into a file."""
    qmp, out, state = (os.path.join(d, n) for n in ("qmp.sock", "ready.out", "q.state"))
    q = subprocess.Popen(qemu_base(initrd, [
        "-chardev", f"file,id=o,path={out}", "-device", "virtio-serial-device",
        "-device", "virtconsole,chardev=o", "-qmp", f"unix:{qmp},server=on,wait=off"]),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        m = Qmp(qmp, who="bench-start")
        end = time.monotonic() + 300
        while not (os.path.exists(out) and b"ready" in open(out, "rb").read()):
            if time.monotonic() > end:
                sys.exit("bench-start: the QEMU guest never got ready")
            time.sleep(0.1)
        m.cmd("migrate", uri=f"exec:cat > {state}")
        end = time.monotonic() + 300
        while m.cmd("query-migrate")["return"].get("status") != "completed":
            if time.monotonic() > end:
                sys.exit("bench-start: QEMU's migrate to a file never completed")
            time.sleep(0.05)
    finally:
        q.kill()
        q.wait()
    return state, out


def qemu_restore(d, initrd, state, out):
    qmp = os.path.join(d, "qmp-r.sock")
    if os.path.exists(qmp):
        os.unlink(qmp)
    t = time.monotonic()
    q = subprocess.Popen(qemu_base(initrd, [
        "-chardev", f"file,id=o,path={out}.r", "-device", "virtio-serial-device",
        "-device", "virtconsole,chardev=o", "-qmp", f"unix:{qmp},server=on,wait=off",
        "-incoming", f"exec:cat {state}"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        Qmp(qmp, who="bench-start").wait_status("running")
        return time.monotonic() - t
    finally:
        q.kill()
        q.wait()


def qemu_cold(initrd):
    t = time.monotonic()
    p = subprocess.run(qemu_base(initrd, ["-device", "isa-debug-exit,iobase=0x4f0,iosize=1"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if p.returncode != (123 << 1) | 1:
        sys.exit(f"bench-start: QEMU cold boot ended with {p.returncode}")
    return time.monotonic() - t


def pss_kib(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def mem_available_kib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


def vmm_pids(prefix):
    return [s["pid"] for s in json.loads(mvm("ls", "--json"))
            if s["name"].startswith(prefix) and s["pid"] > 0]


def density(prefix, opts):
    """Total PSS after the first sandbox and after all, and the MemAvailable drop."""
    avail0 = mem_available_kib()
    names = [f"{prefix}{i}" for i in range(DENSITY)]
    first = 0
    try:
        for i, n in enumerate(names):
            mvm("create", n, *opts)
            mvm("exec", n, "--", "true")
            if i == 0:
                first = sum(pss_kib(p) for p in vmm_pids(prefix))
        total = sum(pss_kib(p) for p in vmm_pids(prefix))
        drop = avail0 - mem_available_kib()
    finally:
        for n in names:
            mvm("rm", "-f", n, check=False)
    return first, total, drop


def main():
    d = tempfile.mkdtemp(prefix="mvm-bench-start.")
    os.environ["MVM_STATE_DIR"] = os.path.join(d, "state")
    os.environ["MVM_TEMPLATE_DIR"] = os.path.join(d, "templates")
    try:
        initrd = os.path.join(d, "initrd")
        mvm("run", "--save-initrd", initrd, "--", "sh", "-c",
            "echo ready > /dev/hvc1; while :; do sleep 1; done")
        state, out = qemu_saved_state(d, initrd)
        mvm("create", "src", *SB_OPTS)
        mvm("exec", "src", "--", "true")
        mvm("template", "create", "tpl", "--from", "src")
        mvm("rm", "-f", "src")
        series = {"mvm cold": [], "mvm template": [], "qemu cold": [], "qemu restore": []}
        for r in range(ROUNDS):
            series["mvm cold"].append(create_exec(f"c{r}", *SB_OPTS))
            mvm("rm", "-f", f"c{r}")
            series["mvm template"].append(create_exec(f"t{r}", "--template", "tpl"))
            mvm("rm", "-f", f"t{r}")
            series["qemu cold"].append(qemu_cold(initrd))
            series["qemu restore"].append(qemu_restore(d, initrd, state, out))
            print(f"bench-start: round {r + 1}/{ROUNDS}: " + ", ".join(
                f"{k} {v[-1] * 1000:.0f} ms" for k, v in series.items()), file=sys.stderr)
        t_first, t_total, t_drop = density("dt", ["--template", "tpl"])
        c_first, c_total, c_drop = density("dc", SB_OPTS)
    finally:
        subprocess.run([MVM, "template", "rm", "--force", "tpl"], capture_output=True)
        shutil.rmtree(d, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in series.items()}
    per_round = lambda a, b: statistics.median(
        x / y for x, y in zip(series[a], series[b]))
    print(f"\nstart benchmark: {ROUNDS} interleaved rounds, guest {MEM}, "
          f"kernel {os.path.realpath(KERNEL)}")
    print(f"{'wall time (ms)':<34} {'min':>8} {'median':>8} {'max':>8}")
    for k, v in series.items():
        label = {"mvm cold": "mvm create+exec, cold boot", "mvm template": "mvm create+exec, template",
                 "qemu cold": "qemu microvm cold boot to init",
                 "qemu restore": "qemu -incoming to running"}[k]
        print(f"{label:<34} {min(v) * 1000:8.0f} {med[k] * 1000:8.0f} {max(v) * 1000:8.0f}")
    r_cold = med["mvm template"] / med["mvm cold"]
    r_qemu = med["mvm template"] / med["qemu restore"]
    print(f"\ntemplate / cold mvm:     {r_cold:.3f}x (median of per-round ratios "
          f"{per_round('mvm template', 'mvm cold'):.3f}x)")
    print(f"template / qemu restore: {r_qemu:.3f}x (median of per-round ratios "
          f"{per_round('mvm template', 'qemu restore'):.3f}x)")
    t_marg = (t_total - t_first) / max(DENSITY - 1, 1)
    c_marg = (c_total - c_first) / max(DENSITY - 1, 1)
    print(f"\ndensity: {DENSITY} idle sandboxes of {MEM}")
    print(f"{'':<16} {'PSS total':>10} {'per sandbox':>12} {'marginal':>10} {'MemAvailable drop':>18}")
    for label, total, marg, drop in (("from template", t_total, t_marg, t_drop),
                                     ("cold", c_total, c_marg, c_drop)):
        print(f"{label:<16} {total / 1024:9.1f}M {total / DENSITY / 1024:11.1f}M "
              f"{marg / 1024:9.1f}M {drop / 1024:17.1f}M")
    r_pss = t_marg / c_marg if c_marg > 0 else float("inf")
    print(f"\ntargets: template <= 0.1x cold: {'met' if r_cold <= 0.1 else 'NOT met'}; "
          f"<= 0.5x qemu restore: {'met' if r_qemu <= 0.5 else 'NOT met'}; "
          f"marginal PSS <= 15% of cold: {r_pss * 100:.0f}% "
          f"{'met' if r_pss <= 0.15 else 'NOT met'}")


if __name__ == "__main__":
    main()
