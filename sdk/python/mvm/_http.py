"""HTTP(S) to ``mvm serve`` (docs/api.md, "HTTP API"): one connection per
request, ``Authorization: Bearer``, a timeout on every socket operation,
every answer bounded. Standard library only (http.client, ssl)."""
from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import ssl
import time
import urllib.parse
from typing import Any, Iterator, Optional

from .errors import (ApiConnectionError, ApiError, AuthenticationError, ForbiddenError, NotFoundError,
                     RateLimitError, TimeoutError, UnavailableError)

MAX_JSON = 16 << 20     # a JSON answer (a list, events)
MAX_LINE = 8 << 20      # one NDJSON line: a 1 MiB agent frame, base64 or JSON-escaped
MAX_ERROR = 64 << 10    # an error body; only its "error" text is kept, at most 1 KiB
READ_CHUNK = 64 << 10

_STATUS = {401: AuthenticationError, 403: ForbiddenError, 404: NotFoundError, 429: RateLimitError,
           503: UnavailableError}


def error_for(status: int, body: bytes) -> ApiError:
    """The SDK's exception for an error answer: serve's JSON ``error`` text, printable, bounded."""
    msg = ""
    try:
        j = json.loads(body[:MAX_ERROR].decode("utf-8", errors="replace"))
        if isinstance(j, dict) and isinstance(j.get("error"), str):
            msg = j["error"]
    except ValueError:
        pass
    if not msg:
        msg = body[:200].decode("utf-8", errors="replace").strip() or http.client.responses.get(status, "error")
    msg = "".join(c if c.isprintable() else "?" for c in msg[:1024])
    return _STATUS.get(status, ApiError)(status, msg)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Client:
    """``mvm serve`` at @url (http:// or https://, an optional path prefix) for the key @key."""

    def __init__(self, url: str, key: str, ca_file: Optional[str] = None) -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"api_url must be http://HOST[:PORT] or https://HOST[:PORT]: {url!r}")
        if u.query or u.fragment or u.username or u.password:
            raise ValueError("api_url takes no query, fragment or credentials (the key goes in api_key)")
        if not key or any(c.isspace() or not c.isprintable() for c in key):
            raise ValueError("api_key is empty or has spaces or control characters")
        # A bearer token in clear beyond this host would be anyone's on the path.
        if u.scheme == "http" and not _loopback(u.hostname) and os.environ.get("MVM_API_ALLOW_PLAIN_HTTP") != "1":
            raise ValueError(f"api_url {url!r}: plain http:// only to a loopback address; use https:// "
                             "(or set MVM_API_ALLOW_PLAIN_HTTP=1 inside a network you trust)")
        self.url = url
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port or (443 if self._https else 80)
        self._prefix = u.path.rstrip("/")
        self._key = key
        self._ctx: Optional[ssl.SSLContext] = None
        if self._https:
            # Verification on (the default context): the operator's CA through @ca_file.
            self._ctx = ssl.create_default_context(cafile=ca_file)
        elif ca_file:
            raise ValueError("ca_file is for https:// api_url only")

    def __repr__(self) -> str:
        return f"Client({self.url!r})"     # never the key

    def _conn(self, timeout: float) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout, context=self._ctx)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def open(self, method: str, path: str, timeout: float, body: Optional[bytes] = None,
             query: Optional[dict[str, str]] = None, ctype: str = "application/json"
             ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request; the connection and the response head. Raises the
        mapped ApiError for a status >= 400 (the connection then closed)."""
        target = self._prefix + path
        if query:
            target += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
        headers = {"Authorization": f"Bearer {self._key}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = ctype
        c = self._conn(timeout)
        try:
            c.request(method, target, body=body, headers=headers)
            r = c.getresponse()
        except socket.timeout:
            c.close()
            raise TimeoutError(f"{method} {path}: mvm serve did not answer within {timeout:g} s") from None
        except ssl.SSLError as e:
            c.close()
            raise ApiConnectionError(f"TLS with {self.url} failed: {e}") from None
        except (OSError, http.client.HTTPException) as e:
            c.close()
            raise ApiConnectionError(f"{method} {path}: cannot talk to mvm serve at {self.url}: {e}") from None
        if r.status >= 400:
            try:
                body_err = _read_capped(r, MAX_ERROR, what=f"{method} {path}")
            except (ApiConnectionError, TimeoutError):
                body_err = b""
            finally:
                c.close()
            raise error_for(r.status, body_err)
        return c, r

    def call(self, method: str, path: str, timeout: float, body: Optional[bytes] = None,
             query: Optional[dict[str, str]] = None, ctype: str = "application/json",
             cap: int = MAX_JSON) -> bytes:
        """One whole request: the answer's body (at most @cap bytes)."""
        c, r = self.open(method, path, timeout, body, query, ctype)
        try:
            return _read_capped(r, cap, what=f"{method} {path}")
        finally:
            c.close()

    def json(self, method: str, path: str, timeout: float, obj: Any = None) -> Any:
        body = None if obj is None else json.dumps(obj, separators=(",", ":")).encode()
        data = self.call(method, path, timeout, body)
        try:
            return json.loads(data)
        except ValueError:
            raise ApiError(200, f"{method} {path}: the answer is not JSON") from None


def _read_capped(r: http.client.HTTPResponse, cap: int, what: str) -> bytes:
    n = r.getheader("Content-Length")
    if n is not None and n.isdigit() and int(n) > cap:
        raise ApiError(r.status, f"{what}: the answer has {n} bytes, more than {cap}")
    buf = bytearray()
    try:
        while True:
            chunk = r.read1(READ_CHUNK) if hasattr(r, "read1") else r.read(READ_CHUNK)
            if not chunk:
                break
            buf += chunk
            if len(buf) > cap:
                raise ApiError(r.status, f"{what}: the answer is longer than {cap} bytes")
    except socket.timeout:
        raise TimeoutError(f"{what}: mvm serve stopped sending the answer") from None
    except (OSError, http.client.HTTPException) as e:
        raise ApiConnectionError(f"{what}: the answer was cut ({e.__class__.__name__})") from None
    return bytes(buf)


class LineReader:
    """NDJSON from a streamed answer: JSON objects as their lines complete,
    however the chunks split them. A stream that ends before @done says so
    (ApiConnectionError); silence longer than @idle (serve sends a heartbeat
    every 15 s) or past @deadline raises TimeoutError."""

    def __init__(self, r: http.client.HTTPResponse, sock: Optional[socket.socket], idle: float) -> None:
        self._r = r
        self._sock = sock
        self._idle = idle
        self._buf = bytearray()

    def objects(self, deadline: Optional[float], what: str) -> Iterator[dict[str, Any]]:
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[:nl + 1]
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    raise ApiError(200, f"{what}: a stream line is not JSON") from None
                if not isinstance(obj, dict):
                    raise ApiError(200, f"{what}: a stream line is not a JSON object")
                yield obj
                continue
            if len(self._buf) > MAX_LINE:
                raise ApiError(200, f"{what}: a stream line is longer than {MAX_LINE} bytes")
            self._fill(deadline, what)

    def _fill(self, deadline: Optional[float], what: str) -> None:
        wait = self._idle
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{what}: timed out")
            wait = min(wait, left)
        if self._sock is not None:
            self._sock.settimeout(wait)
        try:
            chunk = self._r.read1(READ_CHUNK)
        except socket.timeout:
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"{what}: timed out") from None
            raise TimeoutError(f"{what}: mvm serve sent nothing for {wait:g} s, not even a heartbeat") from None
        except (OSError, ValueError, http.client.HTTPException) as e:
            raise ApiConnectionError(f"{what}: the stream from mvm serve was cut before its last line "
                                     f"({e.__class__.__name__}): the server died or restarted, "
                                     "and the command was killed with it") from None
        if not chunk:
            raise ApiConnectionError(f"{what}: the stream from mvm serve ended before its last line: "
                                     "the server died or restarted, and the command was killed with it")
        self._buf += chunk
