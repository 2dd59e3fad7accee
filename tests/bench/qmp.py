"""A minimal QMP client for the benchmarks' QEMU peers (bench-snapshot, bench-start)."""
import json, socket, sys, time


class Qmp:
    def __init__(self, path, deadline=120, who="bench"):
        self.who = who
        end = time.monotonic() + deadline
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(path)
                break
            except OSError:
                if time.monotonic() > end:
                    sys.exit(f"{who}: QEMU's QMP socket never answered")
                time.sleep(0.005)
        self.f = self.s.makefile("rw")
        self.f.readline()
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        self.f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
        self.f.flush()
        while True:
            m = json.loads(self.f.readline())
            if "return" in m or "error" in m:
                return m

    def hmp(self, line):
        """A human-monitor command that must print nothing; its wall time."""
        t = time.monotonic()
        m = self.cmd("human-monitor-command", **{"command-line": line})
        out = m.get("return", "") if "return" in m else str(m["error"])
        if out.strip():
            sys.exit(f"{self.who}: qemu {line}: {out.strip()}")
        return time.monotonic() - t

    def wait_status(self, want, deadline=300):
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            if self.cmd("query-status")["return"]["status"] == want:
                return
            time.sleep(0.002)
        sys.exit(f"{self.who}: QEMU never reached '{want}'")
