"""The guest agent over the sandbox's hybrid vsock socket (docs/agent-protocol.md).

One operation per connection: connect to ``vsock.sock``, write ``CONNECT 1024``,
read ``OK <port>``; from then on the stream speaks frames. Everything the agent
sends is bounded and checked: the guest is not trusted.
"""
from __future__ import annotations

import os
import socket
import stat
import struct
import time
from typing import Callable, Iterator, Optional, Tuple

from . import _proto as P
from ._state import connect_unix, deadline_left
from .errors import AgentError, SandboxError, TimeoutError

AGENT_PORT = 1024


def connect(name: str, timeout: float) -> socket.socket:
    """A stream to the agent, retried while the guest refuses (agent not up yet)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            s = connect_unix(name, "vsock.sock", deadline_left(deadline, "connecting to the agent"))
        except (FileNotFoundError, ConnectionRefusedError):
            raise SandboxError(f"sandbox {name} is not running") from None
        try:
            s.sendall(b"CONNECT %d\n" % AGENT_PORT)
            line = bytearray()
            while not line.endswith(b"\n") and len(line) < 64:
                c = s.recv(1)
                if not c:
                    break
                line += c
            if line.startswith(b"OK "):
                return s
        except OSError:
            pass
        s.close()
        # The guest refused: no agent listens right now.
        time.sleep(min(0.1, deadline_left(deadline, "connecting to the agent")))


def _wait(s: socket.socket, deadline: Optional[float], what: str) -> None:
    s.settimeout(None if deadline is None else deadline_left(deadline, what))


def _read(r: P.Reader, deadline: Optional[float], what: str) -> Optional[Tuple[int, bytes]]:
    """The next frame before @deadline; mvm's TimeoutError after it."""
    _wait(r.sock, deadline, what)
    try:
        return r.read()
    except socket.timeout:
        raise TimeoutError(f"{what}: the agent did not answer in time") from None


def _expect_ok(r: P.Reader, s: socket.socket, deadline: float, what: str) -> bytes:
    while True:
        f = _read(r, deadline, what)
        if f is None:
            raise AgentError(f"{what}: the agent closed the connection")
        if f[0] == P.OK:
            return f[1]
        if f[0] == P.ERROR:
            raise AgentError(f"{what}: {f[1][:1024].decode(errors='replace')}")
        if f[0] != P.WARN:
            raise AgentError(f"{what}: unexpected frame {f[0]} from the agent")


def sync(name: str, timeout: float) -> None:
    """SYNC: the host's wall clock and fresh entropy to the guest (after rollback/restore)."""
    now = time.time_ns()
    payload = struct.pack("<QI", now // 10**9, now % 10**9) + os.urandom(64)
    deadline = time.monotonic() + timeout
    with connect(name, timeout) as s:
        s.sendall(P.frame(P.SYNC, payload))
        _expect_ok(P.Reader(s), s, deadline, "sync")


class Exec:
    """One command on its own connection: frames out, a generator of frames in."""

    def __init__(self, name: str, argv: list[str], env: list[str], cwd: str, timeout_ms: int,
                 stdin: bool, connect_timeout: float) -> None:
        self.sock = connect(name, connect_timeout)
        self.sock.settimeout(None)
        flags = P.EXEC_STDIN if stdin else 0
        self.sock.sendall(P.frame(P.EXEC, P.encode_exec(argv, env, cwd, timeout_ms, flags)))
        self.reader = P.Reader(self.sock)

    def send_stdin(self, data: bytes) -> None:
        for off in range(0, len(data), P.CHUNK):
            self.sock.sendall(P.frame(P.STDIN, data[off:off + P.CHUNK]))

    def close_stdin(self) -> None:
        self.sock.sendall(P.frame(P.STDIN, b""))

    def kill(self, signo: int = 9) -> None:
        try:
            self.sock.sendall(P.frame(P.KILL, struct.pack("<I", signo)))
        except OSError:
            pass

    def frames(self, deadline: Optional[float]) -> Iterator[Tuple[int, bytes]]:
        """STDOUT/STDERR frames as they come, then the EXIT frame; raises on anything else."""
        while True:
            f = _read(self.reader, deadline, "command")
            if f is None:
                raise AgentError("the agent closed the connection before the command's exit")
            if f[0] in (P.STDOUT, P.STDERR, P.EXIT):
                yield f
                if f[0] == P.EXIT:
                    return
            elif f[0] == P.ERROR:
                raise AgentError(f[1][:1024].decode(errors="replace"))
            elif f[0] != P.WARN:
                raise AgentError(f"unexpected frame {f[0]} from the agent")

    def events(self, deadline: Optional[float]) -> Iterator[tuple]:
        """The transport-neutral view of frames() (commands.py): ("stdout"|"stderr",
        bytes) as they come, then ("exit", code, timed_out); code 128+N after signal N."""
        for ftype, payload in self.frames(deadline):
            if ftype == P.STDOUT:
                yield ("stdout", payload)
            elif ftype == P.STDERR:
                yield ("stderr", payload)
            else:
                kind, code, timed_out = P.decode_exit(payload)
                yield ("exit", code if kind == P.EXITED else 128 + code, timed_out)

    def close(self) -> None:
        self.sock.close()


def get_file(name: str, path: str, timeout: float, max_bytes: int) -> bytes:
    """The regular file at @path (symlinks at @path followed), at most @max_bytes."""
    deadline = time.monotonic() + timeout
    with connect(name, timeout) as s:
        r = P.Reader(s)
        s.sendall(P.frame(P.GET, P.put_str(path)))
        while True:
            f = _read(r, deadline, "read")
            if f is None:
                raise AgentError("read: the agent closed the connection")
            if f[0] == P.ERROR:
                raise AgentError(f"read {path}: {f[1][:1024].decode(errors='replace')}")
            if f[0] == P.ENTRY:
                break
            if f[0] != P.WARN:
                raise AgentError(f"read: unexpected frame {f[0]}")
        kind, _mode, size, rel, _ = P.decode_entry(f[1])
        if rel != "":
            raise AgentError("read: malformed tree from the agent")
        if kind != P.FILE:
            raise IsADirectoryError(f"{path} is not a regular file")
        if size > max_bytes:
            raise SandboxError(f"{path} has {size} bytes, more than max_bytes={max_bytes}")
        data = bytearray()
        while len(data) < size:
            f = _read(r, deadline, "read")
            if f is None or f[0] != P.DATA or len(data) + len(f[1]) > size:
                raise AgentError("read: malformed file data from the agent")
            data += f[1]
        return bytes(data)


def _put(name: str, dest: str, leaf: str, timeout: float, send: Callable[[socket.socket], None]) -> None:
    deadline = time.monotonic() + timeout
    with connect(name, timeout) as s:
        r = P.Reader(s)
        s.sendall(P.frame(P.PUT, P.put_str(dest) + P.put_str(leaf)))
        _expect_ok(r, s, deadline, "write")
        _wait(s, deadline, "write")
        send(s)
        s.sendall(P.frame(P.END))
        _expect_ok(r, s, deadline, "write")


def put_file(name: str, path: str, data: bytes, mode: int, timeout: float) -> None:
    """Create or replace the file @path (absolute; its directory exists) with @data."""
    dest, leaf = os.path.split(path.rstrip("/") or "/")

    def send(s: socket.socket) -> None:
        s.sendall(P.frame(P.ENTRY, P.encode_entry(P.FILE, mode, len(data), "")))
        for off in range(0, len(data), P.CHUNK):
            s.sendall(P.frame(P.DATA, data[off:off + P.CHUNK]))

    _put(name, dest or "/", leaf, timeout, send)


def put_tree(name: str, host_path: str, guest_dir: str, timeout: float) -> None:
    """The host file or tree @host_path into the guest directory @guest_dir (as ``cp -r``).

    Symlinks are sent as links; FIFOs, sockets and devices are left out.
    Everything below @host_path is opened relative to its directory's
    descriptor with O_NOFOLLOW and checked to be what lstat saw: an entry
    swapped for a symlink meanwhile is never followed out of the tree.
    """
    root = os.path.abspath(host_path)
    parent, base = os.path.split(root.rstrip("/") or "/")
    leaf = base or "root"

    def send_file(s: socket.socket, fd: int, st: os.stat_result, rel: str, full: str) -> None:
        size = st.st_size
        s.sendall(P.frame(P.ENTRY, P.encode_entry(P.FILE, st.st_mode, size, rel)))
        sent = 0
        while sent < size:
            chunk = os.read(fd, min(P.CHUNK, size - sent))
            if not chunk:
                raise SandboxError(f"{full} shrank while it was copied")
            s.sendall(P.frame(P.DATA, chunk))
            sent += len(chunk)

    def entry(s: socket.socket, dfd: int, nm: str, full: str, rel: str) -> None:
        st = os.lstat(nm, dir_fd=dfd)
        if stat.S_ISLNK(st.st_mode):
            s.sendall(P.frame(P.ENTRY, P.encode_entry(P.SYMLINK, 0o777, 0, rel, os.readlink(nm, dir_fd=dfd))))
            return
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            return
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(nm, flags | (os.O_DIRECTORY if stat.S_ISDIR(st.st_mode) else 0), dir_fd=dfd)
        except OSError as e:
            raise SandboxError(f"{full} changed while it was copied: {e.strerror}") from None
        try:
            now = os.fstat(fd)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or stat.S_IFMT(now.st_mode) != stat.S_IFMT(st.st_mode):
                raise SandboxError(f"{full} changed while it was copied")
            if stat.S_ISREG(now.st_mode):
                send_file(s, fd, now, rel, full)
                return
            s.sendall(P.frame(P.ENTRY, P.encode_entry(P.DIR, now.st_mode, 0, rel)))
            for child in sorted(os.listdir(fd)):
                entry(s, fd, child, os.path.join(full, child), f"{rel}/{child}" if rel else child)
        finally:
            os.close(fd)

    def walk(s: socket.socket) -> None:
        # The root itself is the caller's path (symlinks in it are the caller's choice).
        pfd = os.open(parent or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            entry(s, pfd, base or ".", root, "")
        finally:
            os.close(pfd)

    _put(name, guest_dir, leaf, timeout, walk)
