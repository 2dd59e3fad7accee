"""Which transport a Sandbox uses: local (this host's mvm) or remote
(``mvm serve`` at api_url, or $MVM_API_URL). Both offer the same methods
(_local.py, _remote.py); sandbox.py, commands.py, files.py and network.py
call only those."""
from __future__ import annotations

import os
from typing import Optional, Union

from ._local import LocalTransport
from ._remote import RemoteTransport

Transport = Union[LocalTransport, RemoteTransport]
_LOCAL = LocalTransport()


def pick(api_url: Optional[str] = None, api_key: Optional[str] = None,
         ca_file: Optional[str] = None) -> Transport:
    """Remote when @api_url or $MVM_API_URL is set (the key from @api_key or
    $MVM_API_KEY, the operator's CA from @ca_file or $MVM_API_CA), else local."""
    url = api_url or os.environ.get("MVM_API_URL") or ""
    if not url:
        if api_key or ca_file:
            raise ValueError("api_key/ca_file need api_url (or MVM_API_URL)")
        return _LOCAL
    key = api_key or os.environ.get("MVM_API_KEY") or ""
    if not key:
        raise ValueError("remote mode needs api_key (or MVM_API_KEY): the bearer token of `mvm serve token add`")
    from ._http import Client
    return RemoteTransport(Client(url, key, ca_file or os.environ.get("MVM_API_CA") or None))
