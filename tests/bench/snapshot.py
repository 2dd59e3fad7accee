#!/usr/bin/env python3
"""make bench-snapshot: checkpoint and rollback cost in mvm beside QEMU's
savevm/loadvm on a qcow2 disk, same kernel, same initramfs, same guest size,
one run.

For each guest size (MVM_BENCH_SNAP_SIZES MiB, default "256 1024 2048"):
  mvm   first (full) checkpoint; then, with 16 MiB and with half the RAM
        dirtied since the last checkpoint: checkpoint time, and rollback time
        after dirtying as much again; restore-to-first-exec (mvm restore of a
        snapshot + the first `mvm exec true`).
  qemu  microvm, -accel kvm, a virtio-blk qcow2 disk; the guest fills half its
        RAM, then dirties 16 MiB a second; HMP savevm and loadvm through QMP.
        QEMU saves and loads all of RAM whatever was dirtied, so one number
        stands for both cases.
Wall times are taken by this script around each CLI call / QMP command.
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qmp import Qmp  # noqa: E402

MVM = os.environ.get("MVM", "build/mvm")
GUEST = os.environ.get("MVM_GUEST_DIR", os.path.join(os.path.dirname(MVM), "guest"))
SIZES = [int(s) for s in os.environ.get("MVM_BENCH_SNAP_SIZES", "256 1024 2048").split()]
CMDLINE = ("console=ttyS0 quiet reboot=t panic=-1 nomodule 8250.nr_uarts=1 swiotlb=noforce "
           "cryptomgr.notests tsc=reliable no_timer_check io_delay=none")
T = tempfile.mkdtemp(prefix="mvm-bench-snap.")
ENV = dict(os.environ, MVM_STATE_DIR=os.path.join(T, "state"))


def mvm(*args, check=True):
    p = subprocess.run([MVM, *args], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if check and p.returncode:
        sys.exit(f"bench-snapshot: mvm {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout


def timed(*args):
    t = time.monotonic()
    mvm(*args)
    return time.monotonic() - t


def dirty(name, mib):
    # Non-zero pages (zero pages cost mvm nothing to store), rewritten each time.
    # /tmp is a tmpfs of half the RAM by default: half the RAM would not fit.
    mvm("exec", name, "--", "sh", "-c", "mount -o remount,size=90% /tmp && rm -f /tmp/dirty && "
        f"yes mvm | head -c {mib * 1048576} > /tmp/dirty")


def bench_mvm(size):
    r = {}
    mvm("create", "b", "--memory", f"{size}M", "--disk-size", "128M")
    try:
        r["full"] = timed("checkpoint", "b", "c0")
        for label, mib in (("16M", 16), ("50%", size // 2)):
            dirty("b", mib)
            r[f"ckpt {label}"] = timed("checkpoint", "b", f"c{label[:-1]}")
            dirty("b", mib)
            r[f"rollback {label}"] = timed("rollback", "b", f"c{label[:-1]}")
        snap = os.path.join(T, "snap")
        mvm("snapshot", "b", snap)
        t = time.monotonic()
        mvm("restore", snap, "r")
        mvm("exec", "r", "--", "true")
        r["restore"] = time.monotonic() - t
        mvm("rm", "-f", "r", check=False)
        shutil.rmtree(snap, ignore_errors=True)
    finally:
        mvm("rm", "-f", "b", check=False)
    return r


def bench_qemu(size, initrd):
    disk = os.path.join(T, "q.qcow2")
    out = os.path.join(T, "q.out")
    qmp_path = os.path.join(T, "qmp.sock")
    for p in (disk, out, qmp_path):
        if os.path.exists(p):
            os.unlink(p)
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", disk, "128M"], check=True)
    q = subprocess.Popen(
        ["qemu-system-x86_64", "-M", "microvm,acpi=off,rtc=off", "-accel", "kvm", "-cpu", "host",
         "-m", f"{size}M", "-smp", "1", "-nodefaults", "-no-user-config", "-nographic",
         "-display", "none", "-serial", "null", "-kernel", os.path.join(GUEST, "vmlinux"),
         "-initrd", initrd, "-append", CMDLINE,
         "-chardev", f"file,id=o,path={out}", "-chardev", "null,id=e",
         "-device", "virtio-serial-device", "-device", "virtconsole,chardev=o",
         "-device", "virtio-serial-device", "-device", "virtconsole,chardev=e",
         "-drive", f"file={disk},if=none,id=d0,format=qcow2", "-device", "virtio-blk-device,drive=d0",
         "-qmp", f"unix:{qmp_path},server=on,wait=off", "-no-reboot"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        qmp = Qmp(qmp_path, who="bench-snapshot")
        for _ in range(3000):
            if os.path.exists(out) and b"ready" in open(out, "rb").read():
                break
            time.sleep(0.2)
        else:
            sys.exit("bench-snapshot: the QEMU guest never got ready")
        save = qmp.hmp("savevm s1")
        time.sleep(2)	# let the guest dirty its 16 MiB a second: a real workload runs on
        load = qmp.hmp("loadvm s1")
        return {"savevm": save, "loadvm": load}
    finally:
        q.kill()
        q.wait()


def main():
    rows = []
    for size in SIZES:
        m = bench_mvm(size)
        initrd = os.path.join(T, "q.cpio")
        # busybox head takes plain byte counts
        cmd = (f"yes q | head -c {size // 2 * 1048576} > /tmp/big; echo ready; "
               "while :; do yes q | head -c 16777216 > /tmp/x; sleep 1; done")
        if os.path.exists(initrd):
            os.unlink(initrd)
        mvm("run", "--save-initrd", initrd, "--", "sh", "-c", cmd)
        qm = bench_qemu(size, initrd)
        rows.append((size, m, qm))
        print(f"{size} MiB: mvm {m}  qemu {qm}", flush=True)
    print(f"\n{'guest':>8} {'dirtied':>8} | {'mvm ckpt':>9} {'mvm rollback':>12} | "
          f"{'qemu savevm':>11} {'qemu loadvm':>11} | {'rollback speed-up':>17}")
    for size, m, qm in rows:
        print(f"{size:>7}M {'(full)':>8} | {m['full']:>8.2f}s {'':>12} | {qm['savevm']:>10.2f}s "
              f"{qm['loadvm']:>10.2f}s |")
        for label in ("16M", "50%"):
            ck, rb = m[f"ckpt {label}"], m[f"rollback {label}"]
            print(f"{size:>7}M {label:>8} | {ck:>8.2f}s {rb:>11.2f}s | {qm['savevm']:>10.2f}s "
                  f"{qm['loadvm']:>10.2f}s | {qm['loadvm'] / rb:>16.1f}x")
        print(f"{size:>7}M restore to first exec: mvm {m['restore']:.2f}s")
    shutil.rmtree(T, ignore_errors=True)


if __name__ == "__main__":
    main()
