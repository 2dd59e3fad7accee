"""The lifetime watchdog of a sandbox (``Sandbox.create(timeout=...)``).

``python -m mvm._reaper NAME SECONDS CREATED MVM_BIN``: sleeps, then removes
NAME, unless that name now belongs to a different sandbox (another
``created`` time) or is gone. Runs in its own session, so it outlives the
process that created the sandbox.
"""
import json
import os
import subprocess
import sys
import time

from ._state import sandbox_dir


def main() -> int:
    name, seconds, created, mvm = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
    time.sleep(seconds)
    try:
        with open(os.path.join(sandbox_dir(name), "config.json"), encoding="utf-8") as f:
            if str(json.load(f).get("created", 0)) != created:
                return 0
    except (OSError, ValueError):
        return 0
    return subprocess.run([mvm, "rm", "-f", name], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


if __name__ == "__main__":
    sys.exit(main())
