"""[mcp.servers.NAME] in config.toml, and a workspace's .mcp.json with its trust."""

from __future__ import annotations

import json
from pathlib import Path

from ohtui.settings.config_file import ConfigFile
from ohtui.settings.mcp_trust import TrustStore, read_project_servers, trusted_servers

CONFIG = """
[mcp.servers.time]
command = "uvx"
args = ["mcp-server-time"]
env = { TZ = "UTC" }

[mcp.servers.web]
url = "http://127.0.0.1:9/mcp"
headers = { Authorization = "Bearer ${WEB_TOKEN}" }
timeout = 10
enabled = false

[mcp.servers.broken]
args = ["--flag"]
"""


def test_config_servers_become_mcp_servers_settings(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    loaded = ConfigFile(path).load()
    config = loaded.settings.mcp.mcp_config()
    assert config["time"] == {
        "command": "uvx",
        "args": ["mcp-server-time"],
        "env": {"TZ": "UTC"},
        "enabled": True,
        "timeout": 300_000.0,
        "startupTimeout": 30_000.0,
    }
    assert config["web"]["headers"] == {"Authorization": "Bearer ${WEB_TOKEN}"}
    assert config["web"]["timeout"] == 10_000.0 and config["web"]["enabled"] is False
    # The broken server is named, with its field and line; the others still load.
    assert "broken" not in config
    error = str(loaded.error)
    assert "line 13" in error and "mcp.servers.broken" in error and "`command`" in error


def test_a_server_without_url_is_named(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[mcp.servers.remote]\ntransport = "http"\n', encoding="utf-8")
    error = str(ConfigFile(path).load().error)
    assert "mcp.servers.remote" in error and "`url` is missing" in error


def test_servers_are_saved_back_in_seconds(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[mcp.servers.t]\ncommand = "x"\ntimeout = 12\n', encoding="utf-8")
    settings = ConfigFile(path).load().settings
    assert settings.to_toml() == {"mcp": {"servers": {"t": {"command": "x", "timeout": 12.0}}}}


def test_project_file_trust_is_per_workspace_and_per_content(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    workspace.mkdir()
    store = TrustStore(tmp_path / "data" / "mcp-trust.json")
    assert trusted_servers(read_project_servers(workspace), workspace, store) == ({}, None)
    servers = {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}
    (workspace / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    project = read_project_servers(workspace)
    assert project is not None and project.launches == ["time: uvx mcp-server-time"]
    used, notice = trusted_servers(project, workspace, store)
    assert used == {} and notice is not None and "not trusted" in notice
    store.trust(workspace, project.digest)
    assert trusted_servers(project, workspace, TrustStore(store.path))[0] == servers["mcpServers"]
    # Another workspace with the same file is not trusted; an edited file asks again.
    other = tmp_path / "other"
    other.mkdir()
    assert not store.is_trusted(other, project.digest)
    servers["mcpServers"]["evil"] = {"command": "sh", "args": ["-c", "echo hi"]}
    (workspace / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    edited = read_project_servers(workspace)
    assert edited is not None and not store.is_trusted(workspace, edited.digest)
    assert "evil: sh -c echo hi" in edited.launches


def test_a_broken_project_file_is_reported_not_offered(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{not json", encoding="utf-8")
    used, notice = trusted_servers(read_project_servers(tmp_path), tmp_path, TrustStore(None))
    assert used == {} and notice is not None and "not valid JSON" in notice
