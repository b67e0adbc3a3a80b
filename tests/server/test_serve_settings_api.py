"""`/api/settings`, its secrets and `/api/profiles` on a real `ohtui serve`, through the
routes and through RemoteWorkspace's get_llm / get_secrets / get_mcp_config /
execute_command; nothing secret is kept or logged in the clear."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess

from ohtui.sdk import LLM, RemoteWorkspace, Workspace
from ohtui.sdk.secret import LookupSecret

LLM_KEY = "sk-llm-key-never-in-the-clear-1234"
SECRET_VALUE = "token-value-never-in-the-clear-5678"


def _settings_file(server: ServerProcess) -> str:
    return (server.data_dir / "server-settings.json").read_text()


def test_llm_settings_are_stored_encrypted_and_read_back(server: ServerProcess) -> None:
    with server.client() as client:
        llm = {"model": "openai/test-model", "api_key": LLM_KEY, "base_url": "http://x/v1"}
        patched = client.patch("/api/settings", json={"agent_settings_diff": {"llm": llm}})
        assert patched.status_code == 200, patched.text
        body = patched.json()
        assert body["llm_api_key_is_set"] is True
        assert body["agent_settings"]["llm"]["api_key"] == "**********"
        plain = client.get("/api/settings", headers={"X-Expose-Secrets": "plaintext"}).json()
        assert plain["agent_settings"]["llm"]["api_key"] == LLM_KEY
        assert client.patch("/api/settings", json={}).status_code == 400
        assert client.patch("/api/settings", json={"nonsense": 1}).status_code == 422
        odd = client.get("/api/settings", headers={"X-Expose-Secrets": "encrypted"})
        assert odd.status_code == 422
    stored = _settings_file(server)
    assert LLM_KEY not in stored
    assert LLM_KEY not in server.log()
    assert oct((server.data_dir / "server-settings.json").stat().st_mode & 0o777) == "0o600"

    workspace = RemoteWorkspace(host=server.url, working_dir=str(server.cwd), api_key=server.key)
    try:
        got = workspace.get_llm(temperature=0.3)
    finally:
        workspace.close()
    assert isinstance(got, LLM)
    assert got.model == "openai/test-model"
    assert got.api_key is not None and got.api_key.get_secret_value() == LLM_KEY
    assert got.temperature == 0.3


def test_secrets_crud_and_lookup(server: ServerProcess) -> None:
    with server.client() as client:
        put = client.put(
            "/api/settings/secrets",
            json={"name": "MY_TOKEN", "value": SECRET_VALUE, "description": "demo"},
        )
        assert put.status_code == 200, put.text
        assert put.json() == {"name": "MY_TOKEN", "description": "demo"}
        listed = client.get("/api/settings/secrets").json()["secrets"]
        assert {"name": "MY_TOKEN", "description": "demo"} in listed
        assert SECRET_VALUE not in json.dumps(listed)
        value = client.get("/api/settings/secrets/MY_TOKEN")
        assert value.status_code == 200 and value.text == SECRET_VALUE
        for bad in ("123_invalid", "invalid-name", "x" * 65):
            refused = client.put("/api/settings/secrets", json={"name": bad, "value": "v"})
            assert refused.status_code == 422, bad
            assert "letter" in refused.json()["detail"]
    assert SECRET_VALUE not in _settings_file(server)

    workspace = Workspace(host=server.url, working_dir=str(server.cwd), api_key=server.key)
    assert isinstance(workspace, RemoteWorkspace)
    try:
        found = workspace.get_secrets()
        only = workspace.get_secrets(names=["NOPE"])
    finally:
        workspace.close()
    lookup = found["MY_TOKEN"]
    assert isinstance(lookup, LookupSecret)
    assert lookup.headers == {"X-Session-API-Key": server.key}
    assert lookup.get_value() == SECRET_VALUE
    assert only == {}

    with server.client() as client:
        assert client.delete("/api/settings/secrets/MY_TOKEN").json() == {"deleted": True}
        assert client.get("/api/settings/secrets/MY_TOKEN").status_code == 404
        assert client.delete("/api/settings/secrets/MY_TOKEN").status_code == 404
    assert SECRET_VALUE not in server.log()


def test_profiles_and_mcp_config(server: ServerProcess) -> None:
    with server.client() as client:
        saved = client.post(
            "/api/profiles/fast", json={"llm": {"model": "openai/fast", "api_key": LLM_KEY}}
        )
        assert saved.status_code == 201, saved.text
        listed = client.get("/api/profiles").json()["profiles"]
        assert {"name": "fast", "model": "openai/fast", "base_url": None, "api_key_set": True} in (
            listed
        )
        shown = client.get("/api/profiles/fast").json()
        assert shown["config"]["api_key"] is None and shown["api_key_set"] is True
        assert client.post("/api/profiles/fast", json={"llm": {}}).status_code == 422
        assert client.get("/api/profiles/missing").status_code == 404
        mcp = {"mcp_config": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}
        assert client.patch("/api/settings", json={"agent_settings_diff": mcp}).status_code == 200
    assert LLM_KEY not in _settings_file(server)
    workspace = RemoteWorkspace(host=server.url, working_dir=str(server.cwd), api_key=server.key)
    try:
        fast = workspace.get_llm(profile_name="fast")
        config = workspace.get_mcp_config()
        with pytest.raises(FileNotFoundError, match="missing"):
            workspace.get_llm(profile_name="missing")
    finally:
        workspace.close()
    assert fast.model == "openai/fast" and fast.usage_id == "profile:fast"
    assert config == {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}
    with server.client() as client:
        assert client.delete("/api/profiles/fast").status_code == 200
        assert client.get("/api/profiles/fast").status_code == 404


def test_execute_command_runs_in_the_workspace_and_only_under_the_roots(
    server: ServerProcess, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    workspace = RemoteWorkspace(host=server.url, working_dir=str(folder), api_key=server.key)
    try:
        result = workspace.execute_command("pwd; echo oops >&2; exit 3")
        timed = workspace.execute_command("sleep 5", timeout=1)
        with pytest.raises(httpx.HTTPStatusError) as outside:
            workspace.execute_command("true", cwd="/etc")
    finally:
        workspace.close()
    assert result.stdout.strip() == str(folder.resolve())
    assert result.stderr.strip() == "oops"
    assert result.exit_code == 3 and not result.timeout_occurred
    assert timed.timeout_occurred and timed.exit_code == -1
    assert outside.value.response.status_code == 403
    assert "outside the folders" in outside.value.response.json()["detail"]


def test_settings_routes_need_the_key(server: ServerProcess) -> None:
    for method, path in (
        ("GET", "/api/settings"),
        ("GET", "/api/settings/secrets/MY_TOKEN"),
        ("GET", "/api/profiles"),
        ("POST", "/api/bash/execute_bash_command"),
    ):
        response = httpx.request(method, server.url + path, timeout=30)
        assert response.status_code == 401, path
