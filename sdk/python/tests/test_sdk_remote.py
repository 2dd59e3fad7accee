"""Remote mode only (MVM_TEST_REMOTE=1, a real `mvm serve`): a wrong key is
401 and leaves nothing; another tenant's sandbox is "not found" to every
call; a server killed mid-stream is a clear error at the client, and the
sandbox is still there once the server is back."""
import os

import pytest

from conftest import REMOTE, host_name
from mvm import (ApiConnectionError, AuthenticationError, NotFoundError, Sandbox, SandboxNotFound)
from mvm._transport import pick

pytestmark = pytest.mark.skipif(not REMOTE, reason="remote mode only (MVM_TEST_REMOTE=1)")


def test_wrong_key_is_401_and_leaves_nothing(serve):
    state = os.environ["MVM_STATE_DIR"]
    before = sorted(os.listdir(state)) if os.path.isdir(state) else []
    wrong = serve.token[:-1] + ("0" if serve.token[-1] != "0" else "1")
    for call in (lambda: Sandbox.list(api_key=wrong),
                 lambda: Sandbox.connect("py-main", api_key=wrong),
                 lambda: Sandbox.create(name="py-nope", memory="128M", api_key=wrong)):
        with pytest.raises(AuthenticationError) as e:
            call()
        assert e.value.status == 401 and "token" in e.value.message
    after = sorted(os.listdir(state)) if os.path.isdir(state) else []
    assert after == before


def test_another_tenants_sandbox_is_not_found(sb, serve):
    sb.files.write("/tmp/mine.txt", "mine\n")
    with pytest.raises(SandboxNotFound):
        Sandbox.connect("py-main", api_key=serve.other_token)
    assert "py-main" not in [i.name for i in Sandbox.list(api_key=serve.other_token)]
    theirs = Sandbox("py-main", _transport=pick(serve.url, serve.other_token))
    for call in (lambda: theirs.commands.run("echo in"), lambda: theirs.files.read("/tmp/mine.txt"),
                 lambda: theirs.files.write("/tmp/mine.txt", "theirs\n"), lambda: theirs.checkpoint(),
                 lambda: theirs.events(), lambda: theirs.network.show(), lambda: theirs.fork("py-steal")):
        with pytest.raises(NotFoundError):
            call()
    theirs.kill()       # idempotent: "not found" is nothing to remove
    assert sb.is_running()
    assert sb.files.read("/tmp/mine.txt") == "mine\n"
    assert not os.path.exists(os.path.join(os.environ["MVM_STATE_DIR"], "other.py-steal"))
    assert os.path.isdir(os.path.join(os.environ["MVM_STATE_DIR"], host_name("py-main")))


def test_server_killed_mid_stream_is_a_clear_error_and_the_sandbox_survives(sb, serve):
    killed = []

    def on_out(s):
        if not killed:
            serve.kill9()       # once the command is surely running
            killed.append(s)

    try:
        with pytest.raises(ApiConnectionError, match="cut|ended before"):
            sb.commands.run("echo first; exec sleep 300", on_stdout=on_out, timeout=600)
        assert killed == ["first\n"]
    finally:
        serve.start()
    assert sb.is_running()
    assert sb.commands.run("echo back").stdout == "back\n"
