"""``sb.commands``: run commands in the guest, streamed (E2B's ``Commands``)."""
from __future__ import annotations

import codecs
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from .errors import CommandExitError, TimeoutError

if TYPE_CHECKING:
    from .sandbox import Sandbox

OutputHandler = Callable[[str], None]
EXEC_GRACE = 30.0   # host-side wait past the agent's own timeout
DEFAULT_MAX_OUTPUT = 16 << 20   # characters of each of stdout and stderr kept in the result


@dataclass
class CommandResult:
    """What a finished command left: its output and exit code (128+N after signal N)."""
    stdout: str
    stderr: str
    exit_code: int
    error: Optional[str] = None
    truncated: bool = False     # stdout or stderr was longer than max_output: the rest went only to the handlers


class CommandHandle:
    """A command started with ``background=True``."""

    def __init__(self, ex: Any, timeout: Optional[float], on_stdout: Optional[OutputHandler],
                 on_stderr: Optional[OutputHandler], check: bool, max_output: int = DEFAULT_MAX_OUTPUT) -> None:
        self._ex = ex
        self._check = check
        self._deadline = None if not timeout else time.monotonic() + timeout + EXEC_GRACE
        self._out = _Stream(on_stdout, max_output)
        self._err = _Stream(on_stderr, max_output)
        self._result: Optional[CommandResult] = None
        self._timed_out = False
        self._exc: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        # @ex is the transport's exec (_agent.Exec or _remote.RemoteExec): the same events.
        try:
            for ev in self._ex.events(self._deadline):
                if ev[0] == "stdout":
                    self._out.feed(ev[1])
                elif ev[0] == "stderr":
                    self._err.feed(ev[1])
                else:
                    code, self._timed_out = ev[1], ev[2]
                    self._result = CommandResult(self._out.finish(), self._err.finish(), code,
                                                 truncated=self._out.truncated or self._err.truncated)
        except BaseException as e:  # handed to wait()
            self._exc = e
        finally:
            self._ex.close()

    @property
    def stdout(self) -> str:
        return self._out.text()

    @property
    def stderr(self) -> str:
        return self._err.text()

    def send_stdin(self, data: Union[str, bytes]) -> None:
        """More bytes for the command's stdin."""
        self._ex.send_stdin(data.encode() if isinstance(data, str) else data)

    def close_stdin(self) -> None:
        """End of the command's stdin."""
        self._ex.close_stdin()

    def kill(self) -> bool:
        """SIGKILL to the command's process group. False if it had already finished."""
        if not self._thread.is_alive():
            return False
        # The agent signals the command's process group, which exists only
        # once the command has called setsid(): a KILL that arrives sooner
        # finds no group. So it is repeated until the command is gone.
        for _ in range(60):
            self._ex.kill(9)
            self._thread.join(0.5)
            if not self._thread.is_alive():
                break
        return True

    def wait(self, timeout: Optional[float] = None) -> CommandResult:
        """Wait for the exit; raises CommandExitError (non-zero, unless check=False) or TimeoutError."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the command is still running after {timeout} s")
        if self._exc:
            raise self._exc
        assert self._result is not None
        if self._timed_out:
            raise TimeoutError("the command timed out and was killed")
        if self._check and self._result.exit_code != 0:
            r = self._result
            raise CommandExitError(r.stdout, r.stderr, r.exit_code)
        return self._result


class _Stream:
    """Bytes from the guest as text: UTF-8, invalid bytes replaced, split sequences kept whole."""

    def __init__(self, cb: Optional[OutputHandler], cap: int = DEFAULT_MAX_OUTPUT) -> None:
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self._kept = 0
        self._cap = max(0, int(cap))
        self.truncated = False
        self._cb = cb
        self._lock = threading.Lock()

    def feed(self, b: bytes) -> None:
        s = self._dec.decode(b)
        self._push(s)

    def _push(self, s: str) -> None:
        """The guest decides how much comes: only the first @cap characters are
        kept; the handler still sees everything, as it comes."""
        if not s:
            return
        with self._lock:
            room = self._cap - self._kept
            if room > 0:
                self._parts.append(s[:room])
                self._kept += min(room, len(s))
            if len(s) > room:
                self.truncated = True
        if self._cb:
            self._cb(s)

    def finish(self) -> str:
        self._push(self._dec.decode(b"", final=True))
        return self.text()

    def text(self) -> str:
        with self._lock:
            return "".join(self._parts)


class Commands:
    """Run commands in a sandbox: ``sb.commands.run(...)``."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def run(self, cmd: Union[str, list[str]], envs: Optional[dict[str, str]] = None,
            cwd: Optional[str] = None, timeout: Optional[float] = 60, stdin: Union[str, bytes, None] = None,
            on_stdout: Optional[OutputHandler] = None, on_stderr: Optional[OutputHandler] = None,
            background: bool = False, user: int = 0, check: bool = True,
            request_timeout: Optional[float] = None,
            max_output: int = DEFAULT_MAX_OUTPUT) -> Union[CommandResult, CommandHandle]:
        """Run @cmd (a shell command line for ``sh -c``, or an argv list).

        Output streams to @on_stdout/@on_stderr as it comes. @timeout (seconds,
        None or 0 = none) is enforced by the guest agent, which kills the
        command's process group; then TimeoutError. A non-zero exit raises
        CommandExitError unless @check is False. With @background the call
        returns a CommandHandle at once (stdin stays open for send_stdin()).
        The result keeps at most @max_output characters of each stream (the
        rest reaches only the handlers; ``truncated`` says so): a guest
        cannot make this process hold unbounded output.
        """
        argv = ["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        envs = dict(envs or {})
        for k in envs:
            if not k or "=" in k:
                raise ValueError(f"bad environment variable name {k!r}")
        data = stdin.encode() if isinstance(stdin, str) else stdin
        ex = self._sb._t.exec(self._sb.name, argv, envs, cwd, timeout, data, background,
                              request_timeout or self._sb.request_timeout)
        # Output is read while stdin is still being sent: a command that
        # writes before it reads cannot block the two of us.
        h = CommandHandle(ex, timeout, on_stdout, on_stderr, check, max_output)
        if data is not None and not self._sb.remote:   # remotely it went whole with the request
            try:
                h.send_stdin(data)
                if not background:
                    h.close_stdin()
            except OSError:
                pass    # the command exited without reading it all: its result tells
        return h if background else h.wait()
