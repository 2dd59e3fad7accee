"""Real sandboxes for the SDK's tests (run by tests/integration/sdk-python.sh,
which sets MVM_BIN, MVM_STATE_DIR and, with its network test bed, MVM_TEST_NET_*)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from mvm import Sandbox  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("MVM_BIN"):
        pytest.exit("MVM_BIN is not set: run tests/integration/sdk-python.sh", returncode=2)


@pytest.fixture(scope="session")
def workspace(tmp_path_factory):
    """A host tree copied into the sandbox at create, the baseline of diff/promote."""
    d = tmp_path_factory.mktemp("ws") / "proj"
    d.mkdir()
    (d / "keep.txt").write_text("unchanged\n")
    (d / "edit.txt").write_text("one\ntwo\nthree\n")
    return d


@pytest.fixture(scope="session")
def sb(workspace):
    with Sandbox.create(memory="256M", env={"FROM_CREATE": "yes"}, copy=[(str(workspace), "/data/")],
                        name="py-main") as s:
        yield s
