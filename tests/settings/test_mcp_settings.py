"""[mcp.servers.NAME] in config.toml, and a workspace's .mcp.json with its trust."""

from __future__ import annotations

import json
from pathlib import Path

from ohtui.settings.config_file import ConfigFile
from ohtui.settings.mcp_trust import (
    RECHECK,
    TrustStore,
    read_project_servers,
    trust_project,
    trusted_servers,
    what_changed,
    workspace_key,
)

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
    assert project is not None
    assert project.review() == "time: runs\n  $ uvx mcp-server-time"
    used, notice = trusted_servers(project, workspace, store)
    assert used == {} and notice is not None and "not trusted" in notice
    assert "ohtui trust" in notice
    trust_project(project, workspace, store)
    # Trusted, its servers run in the sandbox.
    confined = {"time": {**servers["mcpServers"]["time"], "sandboxed": True}}
    assert trusted_servers(project, workspace, TrustStore(store.path))[0] == confined
    # Another workspace with the same file is not trusted; an edited file asks again.
    other = tmp_path / "other"
    other.mkdir()
    assert not store.is_trusted(workspace_key(other), project.digest)
    servers["mcpServers"]["evil"] = {"command": "sh", "args": ["-c", "echo hi"]}
    (workspace / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    edited = read_project_servers(workspace)
    assert edited is not None and not store.is_trusted(workspace_key(workspace), edited.digest)
    assert "evil: runs\n  $ sh -c 'echo hi'" in edited.review()
    assert what_changed(edited, workspace, store) == ["evil: new"]


def test_the_review_shows_args_env_and_the_secrets_they_receive_shell_quoted(
    tmp_path: Path,
) -> None:
    servers = {
        "gh": {
            "command": "npx",
            "args": ["-y", "@acme/server", "--label", "two words", "a\nb\x1b[2J\u202e"],
            "env": {"GITHUB_TOKEN": "${GH_PAT}", "MODE": "fast", "BOTH": "$A:$B"},
            "cwd": "tools",
        },
        "web": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer $TOKEN"}},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    project = read_project_servers(tmp_path)
    assert project is not None
    review = project.review(known_secrets={"GH_PAT", "A"}, confined="in the sandbox (x)")
    assert review.splitlines() == [
        "gh: runs in the sandbox (x)",
        "  $ npx -y @acme/server --label 'two words' $'a\\nb\\E[2J\\xe2\\x80\\xae'",
        "  in folder tools",
        "  env GITHUB_TOKEN='${GH_PAT}'  ← your secret GH_PAT",
        "  env MODE=fast",
        "  env BOTH='$A:$B'  ← your secret A, your secret B (not set)",
        "  (it runs among files the agent can edit: a secret it receives can reach the agent)",
        "",
        "web: connects to https://example.com/mcp",
        "  header Authorization: 'Bearer $TOKEN'  ← your secret TOKEN (not set)",
    ]


def test_trust_covers_the_workspace_files_a_server_runs(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("print('v1')\n", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__main__.py").write_text("", encoding="utf-8")
    (tmp_path / "hook.js").write_text("", encoding="utf-8")
    (tmp_path / "package.json").write_text("{}", encoding="utf-8")
    servers = {
        "script": {"command": "python3", "args": ["server.py"]},
        "module": {"command": "python3", "args": ["-m", "pkg"]},
        "node": {"command": "npx", "args": ["x"], "env": {"NODE_OPTIONS": "--require ./hook.js"}},
        "local": {"command": "./server.py", "args": ["--config=server.py"]},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    store = TrustStore(None)
    project = read_project_servers(tmp_path)
    assert project is not None
    runs = {launch.name: sorted(launch.files) for launch in project.launches}
    assert runs == {
        "script": ["server.py"],
        "module": ["pkg/__main__.py"],
        "node": ["hook.js", "package.json"],
        "local": ["server.py"],
    }
    trust_project(project, tmp_path, store)
    assert trusted_servers(read_project_servers(tmp_path), tmp_path, store)[1] is None
    (tmp_path / "server.py").write_text("print('v2')\n", encoding="utf-8")
    (tmp_path / "package.json").write_text('{"scripts": {}}', encoding="utf-8")
    edited = read_project_servers(tmp_path)
    assert edited is not None and edited.digest != project.digest
    used, notice = trusted_servers(edited, tmp_path, store)
    assert used == {} and notice is not None
    assert what_changed(edited, tmp_path, store) == [
        "script: server.py changed",
        "node: package.json changed",
        "local: server.py changed",
    ]
    assert "changed since you trusted it (script: server.py changed;" in notice


def test_a_file_trusted_by_its_bytes_only_is_reviewed_again(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"t": {"command": "x"}}}')
    store = TrustStore(tmp_path / "trust.json")
    store.path.write_text(json.dumps({workspace_key(tmp_path): "0" * 64}))  # the old form
    project = read_project_servers(tmp_path)
    assert project is not None
    assert trusted_servers(project, tmp_path, store)[0] == {}
    assert what_changed(project, tmp_path, store) == [RECHECK]


def test_a_broken_project_file_is_reported_not_offered(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{not json", encoding="utf-8")
    used, notice = trusted_servers(read_project_servers(tmp_path), tmp_path, TrustStore(None))
    assert used == {} and notice is not None and "not valid JSON" in notice


def test_two_ohtui_trusting_at_once_keep_every_entry(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "trust.json"
    failures: list[BaseException] = []

    def trust_many(worker: int) -> None:
        store = TrustStore(path)  # one store per ohtui: nothing shared but the file
        try:
            for n in range(25):
                store.trust(f"{worker}/{n}", "d", {})
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=trust_many, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    kept = json.loads(path.read_text())
    assert len(kept) == 150
    assert not [p.name for p in tmp_path.iterdir() if p.name not in ("trust.json", "trust.lock")]
