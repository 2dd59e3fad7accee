"""A real `mvm serve` for the SDK's tests in remote mode (conftest.py,
MVM_TEST_REMOTE=1): a loopback port, a tokens file in a temporary operator
directory with a fresh token for the test tenant and one for a second
tenant, and a request log beside it."""
import os
import signal
import socket
import subprocess
import threading


class Serve:
    def __init__(self, mvm, d, tenant):
        self.mvm = mvm
        self.dir = str(d)
        os.chmod(self.dir, 0o700)
        self.tokens = os.path.join(self.dir, "tokens.json")
        self.log = os.path.join(self.dir, "requests.jsonl")
        self.token = self._token(tenant)
        self.other_token = self._token("other")     # a second tenant, for the scope tests
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None
        self.start()

    def _token(self, tenant):
        p = subprocess.run([self.mvm, "serve", "token", "add", tenant, "--tokens", self.tokens,
                            "--sandboxes", "8", "--cpus", "16", "--memory", "8G"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, f"mvm serve token add {tenant}: {p.stderr}"
        return p.stdout.strip()

    def start(self):
        """Start the server; return once it says it listens (its own words, not a delay)."""
        # The suite's own calls come fast: the rate limit is not under test here.
        self.proc = subprocess.Popen([self.mvm, "serve", "--listen", f"127.0.0.1:{self.port}",
                                      "--tokens", self.tokens, "--log", self.log, "--rate", "1000",
                                      "--burst", "1000", "--max-streams", "32"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        up = threading.Event()
        err = open(os.path.join(self.dir, "serve.err"), "ab")

        def drain(pipe):
            for line in iter(pipe.readline, b""):
                err.write(line)
                err.flush()
                if b"listening on" in line:
                    up.set()
            up.set()    # it exited: the wait below reports it

        threading.Thread(target=drain, args=(self.proc.stderr,), daemon=True).start()
        # A hang guard only: the server prints its line within a second or two.
        assert up.wait(120), "mvm serve did not say it listens"
        assert self.proc.poll() is None, "mvm serve exited: " + self.errors()

    def errors(self):
        with open(os.path.join(self.dir, "serve.err"), "rb") as f:
            return f.read().decode(errors="replace")[-2000:]

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(60)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill9()
