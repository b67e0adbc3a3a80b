"""Plugins: local folders and git repositories (file:// URLs to local repositories), merged
into the agent (skills, MCP settings, hooks), pinned across a resume, and failing fast and
clearly when a source cannot be used."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation, MessageEvent
from ohtui.sdk.context import AgentContext
from ohtui.sdk.hooks.config import HookConfig
from ohtui.sdk.plugins import (
    Plugin,
    PluginFetchError,
    PluginLoadError,
    PluginSource,
    ResolvedPluginSource,
)
from ohtui.sdk.plugins import fetch as fetch_module
from ohtui.sdk.plugins.fetch import git_url


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill(keyword: str, body: str) -> str:
    return f"---\ntriggers: [{keyword}]\n---\n{body}\n"


def make_plugin(
    root: Path,
    name: str,
    skills: dict[str, str] | None = None,
    mcp: dict[str, Any] | None = None,
    hook_log: Path | None = None,
) -> Path:
    """A plugin folder: a manifest, skill files, .mcp.json, and a hook logging its name."""
    write(root / ".plugin" / "plugin.json", json.dumps({"name": name, "version": "1.0"}))
    for file_name, text in (skills or {}).items():
        write(root / "skills" / f"{file_name}.md", text)
    if mcp is not None:
        write(root / ".mcp.json", json.dumps({"mcpServers": mcp}))
    if hook_log is not None:
        command = f"echo {name} >> {hook_log}"
        hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}
        write(root / "hooks" / "hooks.json", json.dumps({"hooks": hooks}))
    return root


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return path


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "plugin-cache"


@pytest.fixture
def open_conversation(
    llm: LLM, workspace: Path, persistence_dir: Path, cache_dir: Path
) -> Iterator[Callable[..., LocalConversation]]:
    made: list[LocalConversation] = []

    def make(**kwargs: Any) -> LocalConversation:
        kwargs.setdefault("plugin_cache_dir", cache_dir)
        conv = Conversation(
            agent=kwargs.pop("agent", None) or Agent(llm=llm),
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            **kwargs,
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def recalled(conv: LocalConversation, text: str) -> str:
    """Send `text`; the knowledge the conversation added to it for the model."""
    conv.send_message(text)
    event = [e for e in conv.state.events if isinstance(e, MessageEvent)][-1]
    return "".join(c.text for c in event.extended_content)


# --- sources -------------------------------------------------------------------------------


def test_a_plugin_source_keeps_the_reference_names_and_checks_repo_path() -> None:
    spec = PluginSource(source="github:org/plugin", ref="v1.0", repo_path="plugins/a")
    assert (spec.source, spec.ref, spec.repo_path) == ("github:org/plugin", "v1.0", "plugins/a")
    with pytest.raises(ValidationError, match="relative to the repository"):
        PluginSource(source="github:org/plugin", repo_path="/etc")
    with pytest.raises(ValidationError, match="may not leave the repository"):
        PluginSource(source="github:org/plugin", repo_path="a/../../b")


def test_a_resolved_source_never_keeps_credentials() -> None:
    spec = PluginSource(source="https://bot:s3cret@git.example.com/p.git", ref="main")
    resolved = ResolvedPluginSource.from_plugin_source(spec, "a" * 40)
    assert resolved.source == "https://****@git.example.com/p.git"
    assert resolved.original_ref == "main"
    assert resolved.to_plugin_source().ref == "a" * 40


# --- a local folder ------------------------------------------------------------------------


def test_a_local_plugin_brings_skills_mcp_settings_and_hooks(
    open_conversation, llm_server, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    folder = make_plugin(
        tmp_path / "review",
        "review",
        skills={"review": skill("review", "Check the tests first.")},
        mcp={"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}},
        hook_log=log,
    )
    conv = open_conversation(plugins=[PluginSource(source=str(folder))])

    assert "Check the tests first." in recalled(conv, "please review this")
    fetch = {"command": "uvx", "args": ["mcp-server-fetch"], "cwd": str(folder)}
    assert conv.agent.mcp_config == {"fetch": fetch}  # started in its plugin's folder
    assert conv.state.agent.mcp_config == conv.agent.mcp_config
    assert log.read_text() == "review\n"
    assert conv.resolved_plugins == [
        ResolvedPluginSource(source=str(folder), resolved_ref=None, repo_path=None)
    ]


def test_plugins_merge_skills_and_mcp_by_name_last_wins_and_hooks_all_run(
    open_conversation, llm, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    first = make_plugin(
        tmp_path / "a",
        "a",
        skills={"style": skill("style", "A style"), "only-a": skill("alpha", "A only")},
        mcp={"search": {"command": "a-search"}, "db": {"command": "a-db"}},
        hook_log=log,
    )
    second = make_plugin(
        tmp_path / "b",
        "b",
        skills={"style": skill("style", "B style")},
        mcp={"search": {"command": "b-search"}},
        hook_log=log,
    )
    own = HookConfig.from_dict(
        {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"echo own >> {log}"}]}]}
    )
    agent = Agent(llm=llm, agent_context=AgentContext(user_message_suffix="Be brief."))
    conv = open_conversation(
        agent=agent,
        hook_config=own,
        plugins=[PluginSource(source=str(first)), PluginSource(source=str(second))],
    )

    text = recalled(conv, "fix the style, alpha")
    assert "B style" in text and "A style" not in text
    assert "A only" in text
    assert text.endswith("Be brief.")  # the agent's own context is kept
    assert conv.agent.mcp_config == {
        "search": {"command": "b-search", "cwd": str(second)},
        "db": {"command": "a-db", "cwd": str(first)},
    }
    assert log.read_text().splitlines() == ["own", "a", "b"]


def test_a_plugin_skill_can_be_replaced_by_the_project_one(
    open_conversation, llm, workspace: Path, tmp_path: Path
) -> None:
    folder = make_plugin(tmp_path / "p", "p", skills={"deploy": skill("deploy", "plugin way")})
    write(workspace / ".agents" / "skills" / "deploy.md", skill("deploy", "project way"))
    agent = Agent(llm=llm, agent_context=AgentContext(load_project_skills=True))
    conv = open_conversation(agent=agent, plugins=[PluginSource(source=str(folder))])
    assert "project way" in recalled(conv, "deploy")


@pytest.mark.parametrize(
    ("files", "fault"),
    [
        ({".mcp.json": "{not json"}, r"\.mcp\.json line 1: not valid JSON"),
        ({".mcp.json": '{"mcpServers": []}'}, r"\.mcp\.json: must be"),
        ({".plugin/plugin.json": "[1]"}, r"plugin\.json: must be a JSON object"),
        ({"hooks/hooks.json": '{"Nope": []}'}, r"hooks\.json: .*Unknown event type 'Nope'"),
    ],
)
def test_a_broken_plugin_file_is_a_clear_error(
    tmp_path: Path, files: dict[str, str], fault: str
) -> None:
    for relative, text in files.items():
        write(tmp_path / "p" / relative, text)
    with pytest.raises(PluginLoadError, match=fault):
        Plugin.load(tmp_path / "p")


def test_a_plugin_hook_can_run_a_script_the_plugin_ships(open_conversation, tmp_path: Path) -> None:
    root = tmp_path / "with-script"
    script = write(root / "scripts" / "note.sh", f"#!/bin/sh\necho shipped >> {tmp_path}/log\n")
    script.chmod(0o755)
    command = "${CLAUDE_PLUGIN_ROOT}/scripts/note.sh"
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}
    write(root / "hooks" / "hooks.json", json.dumps(hooks))

    conv = open_conversation(plugins=[PluginSource(source=str(root))])
    conv.send_message("hi")

    assert (tmp_path / "log").read_text() == "shipped\n"


def test_a_broken_skill_in_a_plugin_is_a_warning(open_conversation, tmp_path: Path) -> None:
    folder = make_plugin(
        tmp_path / "p", "p", skills={"ok": skill("ok", "fine"), "bad": "---\ntriggers: x\n---\n"}
    )
    conv = open_conversation(plugins=[PluginSource(source=str(folder))])
    [warning] = conv.skill_warnings
    assert warning.startswith("plugin p: ") and "bad.md" in warning
    assert "fine" in recalled(conv, "ok")


def test_a_missing_local_plugin_says_so(open_conversation, tmp_path: Path) -> None:
    with pytest.raises(PluginFetchError, match="does not exist: give a plugin folder"):
        open_conversation(plugins=[PluginSource(source=str(tmp_path / "nowhere"))])


# --- git -----------------------------------------------------------------------------------


@pytest.fixture
def plugin_repo(tmp_path: Path) -> Path:
    repo = git_repo(tmp_path / "origin" / "deploy-plugin")
    make_plugin(repo, "deploy", skills={"deploy": skill("deploy", "version one")})
    commit_all(repo, "v1")
    git(repo, "tag", "v1")
    return repo


def test_a_git_plugin_is_cloned_and_pinned_to_its_commit(
    open_conversation, plugin_repo: Path, cache_dir: Path
) -> None:
    head = git(plugin_repo, "rev-parse", "HEAD")
    spec = PluginSource(source=plugin_repo.as_uri(), ref="main")
    conv = open_conversation(plugins=[spec])

    assert "version one" in recalled(conv, "deploy")
    assert conv.resolved_plugins == [
        ResolvedPluginSource(source=spec.source, resolved_ref=head, original_ref="main")
    ]
    assert conv.state.resolved_plugins == conv.resolved_plugins
    [clone] = cache_dir.iterdir()
    assert (clone / head / "skills" / "deploy.md").is_file()
    remotes = git(clone / "repo.git", "remote")
    assert remotes == ""  # the URL (and any credentials in it) is not kept in the cache


def test_a_resume_uses_the_pinned_commit_a_new_conversation_the_newest(
    open_conversation, plugin_repo: Path
) -> None:
    spec = PluginSource(source=plugin_repo.as_uri())
    first = open_conversation(plugins=[spec])
    pinned = first.resolved_plugins
    first.send_message("hello")
    first_id = first.id
    first.close()
    write(plugin_repo / "skills" / "deploy.md", skill("deploy", "version two"))
    newest = commit_all(plugin_repo, "v2")

    resumed = open_conversation(conversation_id=first_id, plugins=[spec])
    assert resumed.resolved_plugins == pinned
    assert "version one" in recalled(resumed, "deploy")
    resumed.close()

    again = open_conversation(conversation_id=first_id)  # no plugins given: the saved ones
    assert again.resolved_plugins == pinned
    assert again.agent.agent_context is not None
    [deploy] = again.agent.agent_context.skills  # recalled above already: not again
    assert deploy.content == "version one\n"

    fresh = open_conversation(plugins=[spec])
    assert fresh.resolved_plugins is not None
    assert fresh.resolved_plugins[0].resolved_ref == newest
    assert "version two" in recalled(fresh, "deploy")


def test_a_resume_needs_no_network_once_the_commit_is_cached(
    open_conversation, plugin_repo: Path
) -> None:
    spec = PluginSource(source=plugin_repo.as_uri())
    first = open_conversation(plugins=[spec])
    first.send_message("hello")
    first_id, pinned = first.id, first.resolved_plugins
    first.close()
    shutil.rmtree(plugin_repo)  # the source is gone: only the cache has it

    resumed = open_conversation(conversation_id=first_id, plugins=[spec])

    assert resumed.resolved_plugins == pinned
    assert "version one" in recalled(resumed, "deploy")


def test_github_sources_become_https_urls() -> None:
    assert git_url("github:org/plugin") == "https://github.com/org/plugin.git"
    assert git_url("git@example.com:org/plugin.git") == "git@example.com:org/plugin.git"
    assert git_url("./plugins/mine") is None
    with pytest.raises(PluginFetchError, match="'github:owner/repo'"):
        git_url("github:just-a-name")


def test_a_tag_a_commit_and_a_repo_path_pick_the_plugin(
    open_conversation, plugin_repo: Path, tmp_path: Path
) -> None:
    v1 = git(plugin_repo, "rev-parse", "v1")
    make_plugin(plugin_repo / "plugins" / "lint", "lint", skills={"lint": skill("lint", "ruff")})
    write(plugin_repo / "skills" / "deploy.md", skill("deploy", "version two"))
    commit_all(plugin_repo, "v2 and a lint plugin")

    by_tag = open_conversation(plugins=[PluginSource(source=plugin_repo.as_uri(), ref="v1")])
    assert "version one" in recalled(by_tag, "deploy")
    by_commit = open_conversation(plugins=[PluginSource(source=plugin_repo.as_uri(), ref=v1)])
    assert by_commit.resolved_plugins is not None
    assert by_commit.resolved_plugins[0].resolved_ref == v1
    in_folder = open_conversation(
        plugins=[PluginSource(source=plugin_repo.as_uri(), repo_path="plugins/lint")]
    )
    assert "ruff" in recalled(in_folder, "lint")
    with pytest.raises(PluginFetchError, match="has no folder 'plugins/nope'"):
        open_conversation(
            plugins=[PluginSource(source=plugin_repo.as_uri(), repo_path="plugins/nope")]
        )


def test_an_unknown_ref_names_it(open_conversation, plugin_repo: Path) -> None:
    with pytest.raises(PluginFetchError, match="has no branch, tag or commit 'v9'"):
        open_conversation(plugins=[PluginSource(source=plugin_repo.as_uri(), ref="v9")])


def test_a_missing_repository_fails_at_once_and_the_conversation_can_open_again(
    open_conversation, tmp_path: Path
) -> None:
    missing = (tmp_path / "no-such-repo").as_uri()
    started = time.monotonic()
    with pytest.raises(PluginFetchError) as raised:
        open_conversation(plugins=[PluginSource(source=missing)])
    assert time.monotonic() - started < 5
    assert f"plugin {missing}: could not clone it" in str(raised.value)
    assert open_conversation() is not None  # nothing was left half-open


def test_a_server_that_never_answers_fails_within_seconds(
    open_conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fetch_module, "STALL_SECONDS", 2)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[socket.socket] = []

    def accept() -> None:  # accept, then say nothing
        try:
            while True:
                accepted.append(listener.accept()[0])
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{port}/plugin.git"
    started = time.monotonic()
    try:
        with pytest.raises(PluginFetchError, match=f"plugin {url}: could not clone it"):
            open_conversation(plugins=[PluginSource(source=url)])
    finally:
        listener.close()
        for conn in accepted:
            conn.close()
    assert time.monotonic() - started < 15


# --- what a plugin runs, and where ------------------------------------------------------------


def test_the_plugin_root_is_filled_in_throughout_its_mcp_servers(
    open_conversation, tmp_path: Path
) -> None:
    root = "${CLAUDE_PLUGIN_ROOT}"
    server = {
        "command": f"{root}/bin/server",
        "args": ["--config", f"{root}/config.json", "--data=${PLUGIN_ROOT}/data"],
        "env": {"PLUGIN_HOME": root, "TOKEN": "${TOKEN}"},
        "cwd": root,
    }
    folder = make_plugin(tmp_path / "p", "p", mcp={"srv": server})
    conv = open_conversation(plugins=[PluginSource(source=str(folder))])
    assert conv.agent.mcp_config["srv"] == {
        "command": f"{folder}/bin/server",
        "args": ["--config", f"{folder}/config.json", f"--data={folder}/data"],
        "env": {"PLUGIN_HOME": str(folder), "TOKEN": "${TOKEN}"},  # a secret stays a secret
        "cwd": str(folder),
    }


def test_a_plugin_command_hook_runs_in_the_conversations_sandbox(
    open_conversation, workspace: Path, tmp_path: Path
) -> None:
    from ohtui.sdk.sandbox import SandboxConfig

    outside, inside = tmp_path / "outside.txt", workspace / "inside.txt"
    hooks = {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": f"echo in > {inside}; echo out > {outside}"}]}
        ]
    }
    folder = make_plugin(tmp_path / "p", "p")
    write(folder / "hooks" / "hooks.json", json.dumps({"hooks": hooks}))
    conv = open_conversation(plugins=[PluginSource(source=str(folder))], sandbox=SandboxConfig())
    conv.send_message("hello")
    assert inside.read_text() == "in\n"  # the hook ran, in the workspace
    assert not outside.exists()  # and could write nothing outside it


def test_a_plugin_check_sees_every_plugin_first_and_only_those_it_keeps_are_used(
    open_conversation, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    kept = make_plugin(tmp_path / "kept", "kept", skills={"k": skill("kay", "Kept.")}, hook_log=log)
    left = make_plugin(
        tmp_path / "left",
        "left",
        skills={"l": skill("ell", "Left.")},
        mcp={"srv": {"command": "x"}},
        hook_log=log,
    )
    seen: list[list[str]] = []

    def check(plugins: list[Plugin]) -> list[Plugin]:
        seen.append([f"{p.name} {p.source}" for p in plugins])
        return [p for p in plugins if p.name == "kept"]

    conv = open_conversation(
        plugins=[PluginSource(source=str(kept)), PluginSource(source=str(left))],
        plugin_check=check,
    )
    assert seen == [[f"kept {kept}", f"left {left}"]]
    text = recalled(conv, "kay and ell")
    assert "Kept." in text and "Left." not in text
    assert conv.agent.mcp_config == {}
    assert log.read_text() == "kept\n"
    assert [r.source for r in conv.resolved_plugins or []] == [str(kept)]


def test_a_plugin_check_that_refuses_opens_nothing(
    open_conversation, tmp_path: Path, persistence_dir: Path
) -> None:
    log = tmp_path / "hooks.log"
    folder = make_plugin(tmp_path / "p", "p", hook_log=log)

    def refuse(plugins: list[Plugin]) -> list[Plugin]:
        raise RuntimeError("not trusted")

    with pytest.raises(RuntimeError, match="not trusted"):
        open_conversation(plugins=[PluginSource(source=str(folder))], plugin_check=refuse)
    assert not log.exists()
