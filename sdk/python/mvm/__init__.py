"""mvm: KVM microVM sandboxes from Python (standard library only).

    from mvm import Sandbox
    with Sandbox.create(memory="512M") as sb:
        print(sb.commands.run("echo hi").stdout)

Names follow E2B's SDK where they fit; sdk/python/README.md lists the differences.
"""
from .commands import CommandHandle, CommandResult, Commands
from .errors import (AgentError, CommandExitError, PolicyError, SandboxError, SandboxNotFound,
                     TimeoutError)
from .files import EntryInfo, Files, WriteInfo
from .network import Network
from .sandbox import PromoteReport, Sandbox, SandboxInfo

__version__ = "0.1.0"
__all__ = ["Sandbox", "SandboxInfo", "PromoteReport", "Commands", "CommandResult", "CommandHandle",
           "Files", "EntryInfo", "WriteInfo", "Network", "SandboxError", "SandboxNotFound",
           "TimeoutError", "CommandExitError", "PolicyError", "AgentError"]
