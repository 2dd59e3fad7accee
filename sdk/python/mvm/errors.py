"""Typed errors of the mvm SDK."""
from __future__ import annotations

import builtins


class SandboxError(Exception):
    """Base class: something mvm or the sandbox refused or could not do."""


class SandboxNotFound(SandboxError):
    """No sandbox has that name (or its state directory is gone)."""


class TimeoutError(SandboxError, builtins.TimeoutError):
    """A command, a request or the sandbox's lifetime ran out of time.

    Also a subclass of the built-in ``TimeoutError``, so either name catches it.
    """


class PolicyError(SandboxError):
    """The network policy refused a rule or a request (bad rule, unknown rule)."""


class AgentError(SandboxError):
    """The guest agent broke the protocol or reported an error."""


class CommandExitError(SandboxError):
    """A command exited with a non-zero status (``commands.run`` with ``check=True``).

    Carries the whole result: ``stdout``, ``stderr``, ``exit_code``.
    """

    def __init__(self, stdout: str, stderr: str, exit_code: int, error: str | None = None) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code
        self.error = error
        super().__init__(f"command exited with status {exit_code}: {stderr[-500:]}")


class NotSupportedError(SandboxError, NotImplementedError):
    """The call has no counterpart in this mode (say, a host path through
    ``mvm serve``, which never takes one). The message names the call."""


class ApiConnectionError(SandboxError):
    """``mvm serve`` could not be reached, or the connection broke before the
    answer was whole (an exec stream cut without its last line: the server
    died or restarted, and the command was killed with it)."""


class ApiError(SandboxError):
    """``mvm serve`` answered with an error status; ``status`` is the HTTP
    status and ``message`` serve's JSON ``error`` text."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(f"mvm serve: {status}: {message}")


class AuthenticationError(ApiError):
    """401: the API key is missing, wrong or was removed."""


class ForbiddenError(ApiError, PolicyError):
    """403: beyond the operator's policy (an allow rule over the ceiling, an image by path)."""


class NotFoundError(ApiError, SandboxNotFound):
    """404: no such sandbox for this API key (another tenant's reads the same)."""


class RateLimitError(ApiError):
    """429: a quota, the request rate or the number of streams at once."""


class UnavailableError(ApiError):
    """503: the sandbox's VMM or agent does not answer, or the host has no room."""
