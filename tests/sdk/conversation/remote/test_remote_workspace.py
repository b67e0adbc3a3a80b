"""RemoteWorkspace: the server URL, checked and normalised; one shared HTTP client."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ohtui.sdk import RemoteWorkspace


def test_host_is_normalised() -> None:
    workspace = RemoteWorkspace(host="127.0.0.1:8000/", api_key="k")
    assert workspace.host == "http://127.0.0.1:8000"
    assert workspace.display_host == "127.0.0.1:8000"
    assert workspace.websocket_base == "ws://127.0.0.1:8000"
    secure = RemoteWorkspace(host="https://agents.example.com/base", working_dir="/w")
    assert secure.websocket_base == "wss://agents.example.com/base"
    assert secure.display_host == "agents.example.com/base"


def test_a_bad_host_is_a_clear_error() -> None:
    with pytest.raises(ValidationError, match="not an agent server URL"):
        RemoteWorkspace(host="ftp://example.com")


def test_the_key_is_not_in_the_repr() -> None:
    assert "s3cret" not in repr(RemoteWorkspace(host="h:1", api_key="s3cret"))


def test_one_client_shared_until_closed() -> None:
    workspace = RemoteWorkspace(host="h:1", api_key="s3cret")
    client = workspace.client
    assert workspace.client is client
    assert client.headers["X-Session-API-Key"] == "s3cret"
    workspace.close()
    assert client.is_closed
    assert workspace.client is not client
    workspace.close()
