"""Tests for HookConfig, HookDefinition and HookMatcher: both spellings of the format,
files found or not, and every kind of hook with the fields it needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ohtui.sdk.hooks import (
    HookConfig,
    HookConfigError,
    HookDefinition,
    HookEventType,
    HookMatcher,
    HookType,
)

CLAUDE_CONFIG = {
    "PreToolUse": [
        {
            "matcher": "terminal",
            "hooks": [{"type": "command", "command": "check.sh", "timeout": 5}],
        },
        {"matcher": "*", "hooks": [{"type": "command", "command": "audit.sh"}]},
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}],
}


def commands(hooks: list[HookDefinition]) -> list[str]:
    return [h.command for h in hooks]


# --- HookConfig ---------------------------------------------------------------------------


def test_config_in_claude_code_format() -> None:
    config = HookConfig.from_dict(CLAUDE_CONFIG)
    assert not config.is_empty()
    terminal = config.get_hooks_for_event(HookEventType.PRE_TOOL_USE, "terminal")
    assert commands(terminal) == ["check.sh", "audit.sh"]
    assert terminal[0].timeout == 5
    assert terminal[1].timeout == 60  # the default
    editor = config.get_hooks_for_event(HookEventType.PRE_TOOL_USE, "file_editor")
    assert commands(editor) == ["audit.sh"]
    assert commands(config.get_hooks_for_event(HookEventType.STOP)) == ["stop.sh"]
    assert config.get_hooks_for_event(HookEventType.POST_TOOL_USE, "terminal") == []
    assert config.has_hooks_for_event(HookEventType.PRE_TOOL_USE)
    assert config.has_hooks_for_event(HookEventType.STOP)
    assert not config.has_hooks_for_event(HookEventType.SESSION_END)


@pytest.mark.parametrize(
    "data",
    [
        CLAUDE_CONFIG,
        {"hooks": CLAUDE_CONFIG},
        {"hooks": CLAUDE_CONFIG, "permissions": {"allow": []}},  # a Claude Code settings file
        {"pre_tool_use": CLAUDE_CONFIG["PreToolUse"], "stop": CLAUDE_CONFIG["Stop"]},
        {"hooks": {"pre_tool_use": CLAUDE_CONFIG["PreToolUse"], "Stop": CLAUDE_CONFIG["Stop"]}},
    ],
    ids=["pascal", "wrapped", "settings-file", "snake", "wrapped-mixed"],
)
def test_every_spelling_gives_the_same_config(data: dict[str, Any]) -> None:
    assert HookConfig.from_dict(data) == HookConfig.model_validate(CLAUDE_CONFIG)


def test_typed_construction_and_json_round_trip() -> None:
    config = HookConfig(
        pre_tool_use=[
            HookMatcher(matcher="terminal", hooks=[HookDefinition(command="block.sh", timeout=10)])
        ],
        post_tool_use=[HookMatcher(hooks=[HookDefinition(command="log.sh")])],
    )
    assert commands(config.get_hooks_for_event(HookEventType.PRE_TOOL_USE, "terminal")) == [
        "block.sh"
    ]
    saved = config.model_dump(mode="json", exclude_defaults=True)
    assert set(saved) == {"pre_tool_use", "post_tool_use"}
    assert HookConfig.model_validate(json.loads(json.dumps(saved))) == config


def test_an_empty_config() -> None:
    assert HookConfig().is_empty()
    assert HookConfig.from_dict({}).is_empty()
    assert HookConfig.from_dict({"hooks": {}}).is_empty()
    # A matcher without hooks runs nothing.
    empty_matcher = HookConfig.from_dict({"PreToolUse": [{"matcher": "*"}]})
    assert empty_matcher.is_empty()
    assert not empty_matcher.has_hooks_for_event(HookEventType.PRE_TOOL_USE)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"PreToolExecute": []}, r"Unknown event type 'PreToolExecute'.*PreToolUse"),
        ({"pre_tool_usee": []}, r"Unknown event type 'pre_tool_usee'"),
        (
            {"PreToolUse": [], "pre_tool_use": []},
            r"Duplicate hook event: 'PreToolUse' and 'pre_tool_use'",
        ),
        ({"hooks": ["not", "a", "dict"]}, r"'hooks' must map event names"),
    ],
)
def test_wrong_event_names_are_explained(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HookConfig.from_dict(data)


# --- HookConfig.load ------------------------------------------------------------------------


@pytest.mark.parametrize("wrapped", [False, True], ids=["plain", "hooks-key"])
def test_load_reads_a_file(tmp_path: Path, wrapped: bool) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps({"hooks": CLAUDE_CONFIG} if wrapped else CLAUDE_CONFIG))
    config = HookConfig.load(path)
    assert config == HookConfig.model_validate(CLAUDE_CONFIG)
    assert HookConfig.load(str(path)) == config


def test_load_bad_json_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "PreToolUse": [\n    {"matcher": "terminal",,}\n  ]\n}\n')
    with pytest.raises(HookConfigError) as caught:
        HookConfig.load(path)
    message = str(caught.value)
    assert str(path) in message
    assert "line 3" in message


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"PreToolUse": [{"hooks": [{"command": "x", "timeout": -1}]}]}, "PreToolUse.0.hooks.0"),
        ({"PreToolUse": [{"hooks": [{"command": ""}]}]}, "'command' is required"),
        ({"PreToolUse": [{"hooks": [{"type": "prompt", "command": "x"}]}]}, "type is 'prompt'"),
        ({"PreToolUse": [{"hooks": [{"command": "x", "colour": 1}]}]}, "colour"),
        ({"PreToolUs": []}, "PreToolUs"),
        ({"Stop": "not a list"}, "Stop"),
    ],
)
def test_load_bad_fields_names_the_file_and_field(
    tmp_path: Path, data: dict[str, Any], field: str
) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps(data))
    with pytest.raises(HookConfigError) as caught:
        HookConfig.load(path)
    message = str(caught.value)
    assert str(path) in message
    assert field in message


def test_load_a_missing_file_gives_no_hooks(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "absent.json"
    assert HookConfig.load(path).is_empty()
    assert "absent.json" in caplog.text  # a mistyped path is not silent


def test_load_an_unreadable_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_bytes(b"\xff\xfe not text")
    with pytest.raises(HookConfigError, match=r"cannot read hook config .*hooks\.json"):
        HookConfig.load(path)


def test_load_finds_the_projects_hooks_file_then_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project, elsewhere = tmp_path / "home", tmp_path / "project", tmp_path / "elsewhere"
    for directory in (home, project, elsewhere):
        (directory / ".openhands").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    assert HookConfig.load(working_dir=project).is_empty()  # no file anywhere yet

    user_hooks = {"Stop": [{"hooks": [{"command": "user.sh"}]}]}
    (home / ".openhands" / "hooks.json").write_text(json.dumps(user_hooks))
    found = HookConfig.load(working_dir=project)
    assert commands(found.get_hooks_for_event(HookEventType.STOP)) == ["user.sh"]

    project_hooks = {"hooks": {"Stop": [{"hooks": [{"command": "project.sh"}]}]}}
    (project / ".openhands" / "hooks.json").write_text(json.dumps(project_hooks))
    found = HookConfig.load(working_dir=str(project))
    assert commands(found.get_hooks_for_event(HookEventType.STOP)) == ["project.sh"]

    # Without a working_dir, the current directory is the project.
    assert commands(HookConfig.load().get_hooks_for_event(HookEventType.STOP)) == ["user.sh"]
    monkeypatch.chdir(project)
    assert commands(HookConfig.load().get_hooks_for_event(HookEventType.STOP)) == ["project.sh"]


# --- HookDefinition -------------------------------------------------------------------------


def test_hook_types_and_their_fields() -> None:
    command = HookDefinition(command="check.sh")
    assert (command.type, command.async_) == (HookType.COMMAND, False)
    prompt = HookDefinition(type=HookType.PROMPT, prompt="Block destructive commands")
    assert (prompt.type, prompt.command) == (HookType.PROMPT, "")
    agent = HookDefinition(type="agent", system_prompt="Check the tests ran", tools=["terminal"])
    assert (agent.type, agent.tools, agent.max_iterations) == (HookType.AGENT, ["terminal"], 3)
    assert HookDefinition(type="agent").system_prompt is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "'command' is required when type is 'command'"),
        ({"type": "command", "command": ""}, "'command' is required"),
        ({"type": "prompt"}, "'prompt' is required when type is 'prompt'"),
        (
            {"type": "prompt", "prompt": "p", "command": "x"},
            "must not be set when type is 'prompt'",
        ),
        ({"type": "agent", "command": "x"}, "must not be set when type is 'agent'"),
        ({"type": "agent", "async": True}, "'async' is not supported for agent hooks"),
        ({"type": "prompt", "prompt": "p", "async": True}, "not supported for prompt hooks"),
        ({"type": "script", "command": "x"}, "type"),
        ({"command": "x", "timeout": 0}, "timeout"),
    ],
)
def test_hook_fields_that_do_not_fit_are_rejected(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        HookDefinition.model_validate(fields)


def test_async_is_spelled_async_in_json() -> None:
    hook = HookDefinition.model_validate({"command": "log.sh", "async": True})
    assert hook.async_ is True
    assert HookDefinition(command="log.sh", async_=True) == hook
    assert hook.model_dump(mode="json", by_alias=True)["async"] is True
    assert hook.model_dump(mode="json")["async_"] is True
    config = HookConfig.from_dict({"PostToolUse": [{"hooks": [{"command": "a", "async": True}]}]})
    [loaded] = config.get_hooks_for_event(HookEventType.POST_TOOL_USE, "terminal")
    assert loaded.async_ is True


def test_command_stays_a_required_string_in_the_schema() -> None:
    schema = HookDefinition.model_json_schema()
    assert "command" in schema["required"]
    assert schema["properties"]["command"] == {"title": "Command", "type": "string"}
    assert HookDefinition(type="prompt", prompt="p").model_dump()["command"] == ""


@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        ({"command": "./check.sh --strict"}, "./check.sh --strict"),
        ({"type": "prompt", "name": "no-rm", "prompt": "Block rm -rf"}, "prompt-hook:no-rm"),
        (
            {"type": "prompt", "prompt": "Block destructive commands"},
            "prompt-hook:Block destructive co",
        ),
        ({"type": "agent", "name": "tests-ran"}, "agent-hook:tests-ran"),
        ({"type": "agent", "system_prompt": "A" * 50}, "agent-hook:" + "A" * 20),
        ({"type": "agent"}, "agent-hook:agent"),
    ],
)
def test_display_command_names_the_hook(fields: dict[str, Any], shown: str) -> None:
    assert HookDefinition.model_validate(fields).display_command == shown


# --- HookMatcher ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "tool", "matches"),
    [
        ("terminal", "terminal", True),
        ("terminal", "file_editor", False),
        ("*", "terminal", True),
        ("", "file_editor", True),
        ("term.*", "terminal", True),
        ("term", "terminal", False),  # a regex must match the whole name
        ("terminal|file_editor", "file_editor", True),
        ("terminal|file_editor", "terminalfile_editor", False),
        ("/.*_editor/", "file_editor", True),
        ("/.*_editor/", "terminal", False),
        ("/term/", "terminal", False),  # delimited regexes match the whole name too
        ("/terminal/", "/terminal/", False),  # the slashes are delimiters, not characters
        ("[invalid", "terminal", False),
        ("[invalid", "[invalid", True),  # not a regex after all: the name itself
        ("/[invalid/", "terminal", False),
        ("terminal", None, True),  # events without a tool match every matcher
    ],
)
def test_matcher(matcher: str, tool: str | None, matches: bool) -> None:
    assert HookMatcher(matcher=matcher).matches(tool) is matches
