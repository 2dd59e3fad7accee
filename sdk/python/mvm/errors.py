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
