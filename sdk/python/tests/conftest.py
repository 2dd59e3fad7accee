"""Real sandboxes for the SDK's tests (run by tests/integration/sdk-python.sh,
which sets MVM_BIN, MVM_STATE_DIR and, with its network test bed, MVM_TEST_NET_*).

MVM_TEST_REMOTE=1 runs the same tests in remote mode: a `$MVM_BIN serve` on
a loopback port with a fresh token in a temporary operator directory, the
SDK pointed at it through MVM_API_URL/MVM_API_KEY (serve_fixture.py).
Tests marked `nokvm` (test_remote_unit.py: a fake server) need neither."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from mvm import Sandbox  # noqa: E402

REMOTE = os.environ.get("MVM_TEST_REMOTE") == "1"
# The host's names of a tenant's sandboxes are TENANT.NAME (docs/api.md).
TENANT = "pytest"


def pytest_configure(config):
    config.addinivalue_line("markers", "nokvm: runs without KVM and without the mvm binary")
    config.addinivalue_line("markers", "local_only: a local-mode call (remote mode checks its refusal instead)")


def pytest_collection_modifyitems(config, items):
    if REMOTE:
        for i in items:
            if i.get_closest_marker("local_only"):
                i.add_marker(pytest.mark.skip(reason="a local-mode mechanism (no counterpart through mvm serve)"))
    if all(i.get_closest_marker("nokvm") for i in items):
        return
    if not os.environ.get("MVM_BIN"):
        pytest.exit("MVM_BIN is not set: run tests/integration/sdk-python.sh", returncode=2)


@pytest.fixture(scope="session")
def serve(tmp_path_factory):
    """Remote mode's `mvm serve` (None in local mode); the environment points the SDK at it."""
    if not REMOTE:
        yield None
        return
    from serve_fixture import Serve
    s = Serve(os.environ["MVM_BIN"], tmp_path_factory.mktemp("serve"), TENANT)
    os.environ["MVM_API_URL"] = s.url
    os.environ["MVM_API_KEY"] = s.token
    try:
        yield s
    finally:
        os.environ.pop("MVM_API_URL", None)
        os.environ.pop("MVM_API_KEY", None)
        s.stop()


def host_name(name):
    """Where the sandbox @name lives on the host (its state directory's name)."""
    return f"{TENANT}.{name}" if REMOTE else name


@pytest.fixture(scope="session")
def workspace(tmp_path_factory):
    """A host tree copied into the sandbox at create, the baseline of diff/promote."""
    d = tmp_path_factory.mktemp("ws") / "proj"
    d.mkdir()
    (d / "keep.txt").write_text("unchanged\n")
    (d / "edit.txt").write_text("one\ntwo\nthree\n")
    return d


@pytest.fixture(scope="session")
def sb(workspace, serve):
    if REMOTE:
        # --copy goes as serve's workspace (a tar; PUT .../workspace).
        # A sandbox with no allow rule has no network device through serve:
        # one harmless rule (a closed port of the test host) gives it one.
        net_host = os.environ.get("MVM_TEST_NET_HOST")
        allow = [f"{net_host}:9/tcp"] if net_host else None
        s = Sandbox.create(memory="256M", env={"FROM_CREATE": "yes"}, name="py-main", allow=allow,
                           copy=[(str(workspace), "/data/")])
    else:
        s = Sandbox.create(memory="256M", env={"FROM_CREATE": "yes"}, copy=[(str(workspace), "/data/")],
                           name="py-main")
    with s:
        yield s
