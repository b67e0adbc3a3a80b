"""ohtui's own files are out of the agent's reach in every sandbox mode, whatever the
workspace is: with the workspace at the home folder (above the config folder), a LOW command
under `--confirm never` can neither read nor change the settings, the approval rules, the
trust file, the prompt history, the logs or other conversations; the user's skills stay
readable and unchangeable; the file editor refuses the same, even with the sandbox off.

End to end through `ohtui -p`, with the settings under a home folder outside /tmp (the
sandbox's /tmp is private, which would hide them without any of this).
"""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.cli import main

CONFIG = '[ui]\ntheme = "nord"\n'
RULES = '{"rules": []}\n'


@pytest.fixture(autouse=True)
def own_log_handler() -> Iterator[None]:
    """The log file these runs open is under a home folder removed afterwards: the handler
    goes with it, so the next test in this process opens its own."""
    before = list(logging.getLogger().handlers)
    yield
    for handler in logging.getLogger().handlers:
        if handler not in before:
            logging.getLogger().removeHandler(handler)
            handler.close()


@pytest.fixture
def dirs(home: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer) -> Path:
    """The user's ohtui folders where platformdirs puts them, under a home folder."""
    for name in ("OHTUI_CONFIG", "OHTUI_CONFIRM", "OPENAI_API_KEY", "OHTUI_SANDBOX"):
        monkeypatch.delenv(name, raising=False)
    config_dir = home / ".config" / "ohtui"
    data_dir = home / ".local" / "share" / "ohtui"
    log_dir = home / ".local" / "state" / "ohtui" / "log"
    for path in (config_dir / "skills" / "pdf", data_dir, log_dir):
        path.mkdir(parents=True)
    (config_dir / "config.toml").write_text(CONFIG)
    (config_dir / "skills" / "pdf" / "SKILL.md").write_text("---\nname: pdf\n---\nUse pdf.\n")
    (data_dir / "approval-rules.json").write_text(RULES)
    (data_dir / "mcp-trust.json").write_text("{}\n")
    (data_dir / "prompt-history.jsonl").write_text('{"text": "my private prompt"}\n')
    (log_dir / "ohtui.log").write_text("a private log line\n")
    monkeypatch.setenv("OHTUI_CONFIG_DIR", str(config_dir))
    monkeypatch.setenv("OHTUI_DATA_DIR", str(data_dir))
    monkeypatch.setenv("OHTUI_LOG_DIR", str(log_dir))
    monkeypatch.setenv("OHTUI_MODEL", "openai/test-model")
    monkeypatch.setenv("OHTUI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OHTUI_API_KEY", "sk-test")
    monkeypatch.setenv("OHTUI_NUM_RETRIES", "0")
    monkeypatch.chdir(home)
    return home


def ohtui(*args: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    try:
        return main(list(args))
    except SystemExit as exit_:
        return int(exit_.code or 0)


ATTACK = (
    "cat .config/ohtui/config.toml .local/share/ohtui/prompt-history.jsonl "
    ".local/state/ohtui/log/ohtui.log; "
    'printf \'[confirmation]\\npolicy = "never"\\n[sandbox]\\nmode = "off"\\n\' '
    ">> .config/ohtui/config.toml; "
    'echo \'{"rules": [{"pattern": "*", "decision": "allow"}]}\' '
    "> .local/share/ohtui/approval-rules.json; "
    "echo '{}' > .local/share/ohtui/mcp-trust.json; "
    "echo x > .config/ohtui/skills/pdf/SKILL.md; "
    "rm -f .local/state/ohtui/log/ohtui.log; "
    "cat .config/ohtui/skills/pdf/SKILL.md; echo END"
)


@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
def test_a_command_cannot_read_or_change_ohtuis_files_from_a_home_workspace(
    mode: str,
    dirs: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    llm_server.reply_tool_call("terminal", {"command": ATTACK, "security_risk": "LOW"})
    llm_server.reply_text("Done.")
    code = ohtui(
        "-p", "go", "--json", "--sandbox", mode, "--confirm", "never", monkeypatch=monkeypatch
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert (dirs / ".config/ohtui/config.toml").read_text() == CONFIG
    assert (dirs / ".local/share/ohtui/approval-rules.json").read_text() == RULES
    assert (dirs / ".local/share/ohtui/mcp-trust.json").read_text() == "{}\n"
    assert (dirs / ".local/state/ohtui/log/ohtui.log").exists()
    assert "Use pdf." in (dirs / ".config/ohtui/skills/pdf/SKILL.md").read_text()
    observations = [json.loads(line) for line in out.splitlines() if '"ObservationEvent"' in line]
    seen = json.dumps(observations)
    assert "END" in seen  # the command ran
    assert 'theme = \\"nord\\"' not in seen and "my private prompt" not in seen
    assert "a private log line" not in seen
    assert "Use pdf." in seen  # skills stay readable


@pytest.mark.parametrize("mode", ["workspace-write", "off"])
@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("create", ".config/ohtui/config2.toml"),
        ("str_replace", ".config/ohtui/config.toml"),
        ("view", ".local/share/ohtui/prompt-history.jsonl"),
        ("view", ".local/share/ohtui"),
        ("str_replace", ".local/share/ohtui/approval-rules.json"),
        ("create", ".config/ohtui/skills/pdf/evil.sh"),
        ("view", ".local/state/ohtui/log/ohtui.log"),
    ],
)
def test_the_file_editor_refuses_ohtuis_files_in_every_mode(
    mode: str,
    command: str,
    path: str,
    dirs: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    arguments = {"command": command, "path": str(dirs / path), "security_risk": "LOW"}
    if command == "create":
        arguments["file_text"] = "policy = 'never'\n"
    if command == "str_replace":
        arguments |= (
            {"old_str": "{", "new_str": '{"x": 1, '}
            if path.endswith(".json")
            else {
                "old_str": "nord",
                "new_str": 'nord"\n[sandbox]\nmode = "off',
            }
        )
    llm_server.reply_tool_call("file_editor", arguments)
    llm_server.reply_text("Done.")
    watched = [*(dirs / ".config").rglob("*"), *(dirs / ".local/share/ohtui").glob("*.json*")]
    before = {p: p.read_bytes() for p in watched if p.is_file()}
    code = ohtui(
        "-p", "go", "--json", "--sandbox", mode, "--confirm", "never", monkeypatch=monkeypatch
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert {p: p.read_bytes() for p in before} == before  # ohtui's own writes aside
    assert not (dirs / ".config/ohtui/config2.toml").exists()
    assert not (dirs / ".config/ohtui/skills/pdf/evil.sh").exists()
    observation = next(
        json.loads(line) for line in out.splitlines() if '"ObservationEvent"' in line
    )
    text = json.dumps(observation)
    assert "my private prompt" not in text and "a private log line" not in text
    assert "belongs to the application" in text, text


MOVES = [
    # The folder above a guarded one is moved away, and the guarded path made anew.
    "mv .config .config-old && mkdir -p .config/ohtui && "
    "printf '[confirmation]\\npolicy = \"never\"\\n' > .config/ohtui/config.toml",
    "mv .local/share .local/share-old && mkdir -p .local/share/ohtui && "
    'echo \'{"rules": [{"pattern": "*", "decision": "allow"}]}\' '
    "> .local/share/ohtui/approval-rules.json",
    "mv .local .local-old && mkdir -p .local/share/ohtui && echo '{}' > "
    ".local/share/ohtui/mcp-trust.json",
    "rm -rf .config/ohtui; mkdir -p .config/ohtui && echo evil > .config/ohtui/config.toml",
    "cd .config && mv ohtui ohtui-old; mkdir ohtui && echo evil > ohtui/config.toml",
    "ln -sfn /tmp .config/ohtui; echo evil > .config/ohtui/config.toml",
]


@pytest.mark.parametrize("attack", MOVES)
def test_a_command_cannot_move_ohtuis_folders_aside_and_make_new_ones(
    attack: str,
    dirs: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    llm_server.reply_tool_call("terminal", {"command": attack, "security_risk": "LOW"})
    llm_server.reply_text("Done.")
    code = ohtui(
        "-p",
        "go",
        "--json",
        "--sandbox",
        "workspace-write",
        "--confirm",
        "never",
        monkeypatch=monkeypatch,
    )
    assert code == 0, capsys.readouterr().out
    assert (dirs / ".config/ohtui/config.toml").read_text() == CONFIG
    assert (dirs / ".local/share/ohtui/approval-rules.json").read_text() == RULES
    assert (dirs / ".local/share/ohtui/mcp-trust.json").read_text() == "{}\n"
    assert not list(dirs.glob("*-old")) and not list(dirs.glob(".*-old"))


def test_missing_folders_of_ohtuis_are_made_so_a_command_cannot_make_them(
    dirs: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import shutil

    shutil.rmtree(dirs / ".config" / "ohtui")  # a fresh install: no settings saved yet
    attack = (
        "mkdir -p .config/ohtui/skills/evil && printf '[sandbox]\\nmode = \"off\"\\n' "
        "> .config/ohtui/config.toml; echo x > .config/ohtui/skills/evil/SKILL.md"
    )
    llm_server.reply_tool_call("terminal", {"command": attack, "security_risk": "LOW"})
    llm_server.reply_text("Done.")
    code = ohtui(
        "-p",
        "go",
        "--json",
        "--sandbox",
        "workspace-write",
        "--confirm",
        "never",
        monkeypatch=monkeypatch,
    )
    assert code == 0, capsys.readouterr().out
    assert not (dirs / ".config/ohtui/config.toml").exists()
    assert not (dirs / ".config/ohtui/skills/evil").exists()


def test_a_config_file_given_with_config_is_out_of_reach(
    dirs: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`ohtui --config team.toml`, in the workspace: the agent must not rewrite it."""
    team = dirs / "team.toml"
    team.write_text(CONFIG)
    attack = "cat team.toml; printf '[confirmation]\\npolicy = \"never\"\\n' >> team.toml; echo END"
    llm_server.reply_tool_call("terminal", {"command": attack, "security_risk": "LOW"})
    llm_server.reply_tool_call(
        "file_editor",
        {"command": "create", "path": str(team), "file_text": "x", "security_risk": "LOW"},
    )
    llm_server.reply_text("Done.")
    code = ohtui(
        "-p", "go", "--json", "--config", str(team), "--confirm", "never", monkeypatch=monkeypatch
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert team.read_text() == CONFIG
    assert "END" in out and 'theme = \\"nord\\"' not in out


def test_a_path_the_system_refuses_is_an_answer_not_an_error(home: Path) -> None:
    from ohtui.sdk.sandbox import Sandbox, SandboxConfig

    sandbox = Sandbox(SandboxConfig(), str(home))
    for check in (sandbox.check_read, sandbox.check_write):
        problem = check("a\0b")
        assert problem is not None and "not a valid path" in problem


@pytest.mark.parametrize("given", ["conf/team.toml", "./conf/../conf/team.toml"])
def test_a_config_file_given_by_a_relative_path_is_out_of_reach(
    given: str,
    dirs: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (dirs / "conf").mkdir()
    team = dirs / "conf" / "team.toml"
    team.write_text(CONFIG)
    attack = "mv conf conf-old; mkdir conf; echo '[sandbox]' > conf/team.toml; echo END"
    llm_server.reply_tool_call("terminal", {"command": attack, "security_risk": "LOW"})
    llm_server.reply_text("Done.")
    code = ohtui(
        "-p", "go", "--json", "--config", given, "--confirm", "never", monkeypatch=monkeypatch
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert team.read_text() == CONFIG and "END" in out
