"""mvm: KVM microVM sandboxes from Python (standard library only).

    from mvm import Sandbox
    with Sandbox.create(memory="512M") as sb:
        print(sb.commands.run("echo hi").stdout)

With ``api_url``/``api_key`` (or MVM_API_URL/MVM_API_KEY) the same calls go
through ``mvm serve`` over HTTP(S) instead of the local mvm binary.

Names follow E2B's SDK where they fit; sdk/python/README.md lists the differences.
"""
from .commands import CommandHandle, CommandResult, Commands
from .errors import (AgentError, ApiConnectionError, ApiError, AuthenticationError, CommandExitError,
                     ForbiddenError, NotFoundError, NotSupportedError, PolicyError, RateLimitError,
                     SandboxError, SandboxNotFound, TimeoutError, UnavailableError)
from .files import EntryInfo, Files, WriteInfo
from .network import Network
from .sandbox import PromoteReport, Sandbox, SandboxInfo

__version__ = "0.1.0"
__all__ = ["Sandbox", "SandboxInfo", "PromoteReport", "Commands", "CommandResult", "CommandHandle",
           "Files", "EntryInfo", "WriteInfo", "Network", "SandboxError", "SandboxNotFound",
           "TimeoutError", "CommandExitError", "PolicyError", "AgentError", "NotSupportedError",
           "ApiError", "ApiConnectionError", "AuthenticationError", "ForbiddenError", "NotFoundError",
           "RateLimitError", "UnavailableError"]
