"""Profile: config.toml with this run's overrides, user approval rules, secrets in memory."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ohtui.sdk import ApprovalRule
from ohtui.settings.approval_rules import ApprovalRuleStore
from ohtui.settings.overrides import run_overrides
from ohtui.settings.profile import Profile


def make(tmp_path: Path, text: str = "", **environ: str) -> Profile:
    path = tmp_path / "config.toml"
    if text:
        path.write_text(text, encoding="utf-8")
    return Profile(path, run_overrides(environ), use_keyring=False, environ=environ).load()


def test_settings_in_force_combine_the_file_and_the_environment(tmp_path: Path) -> None:
    profile = make(tmp_path, '[llm]\nmodel = "a/file"\ntimeout = 60\n', OHTUI_MODEL="b/env")
    assert profile.problem is None
    assert profile.settings.llm.model == "b/env"
    assert profile.settings.llm.timeout == 60
    assert profile.saved.llm.model == "a/file"  # what the settings screen edits


def test_a_bad_file_and_a_bad_variable_are_both_reported(tmp_path: Path) -> None:
    profile = make(tmp_path, "[llm]\ntimeout = -1\n", OHTUI_TEMPERATURE="hot")
    assert profile.problem is not None
    assert "llm.timeout" in profile.problem and "OHTUI_TEMPERATURE" in profile.problem
    assert profile.settings.llm.timeout == 300  # the default, until it is fixed


def test_conversations_dir_follows_the_storage_setting(tmp_path: Path) -> None:
    profile = make(tmp_path, f'[storage]\nconversations_dir = "{tmp_path / "convs"}"\n')
    assert profile.conversations_dir == tmp_path / "convs"


def test_save_writes_the_file_and_puts_it_in_force(tmp_path: Path) -> None:
    profile = make(tmp_path, "[extra]\nkeep = true\n", OHTUI_TIMEOUT="30")
    settings = profile.saved
    settings.llm.model = "openai/gpt-4o"
    profile.save(settings)
    assert profile.settings.llm.model == "openai/gpt-4o"
    assert profile.settings.llm.timeout == 30  # the override still wins
    raw = tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))
    assert raw == {"extra": {"keep": True}, "llm": {"model": "openai/gpt-4o"}}


def test_user_rules_live_in_config_and_workspace_rules_in_the_rules_file(
    tmp_path: Path,
) -> None:
    profile = make(tmp_path, '[llm]\nmodel = "a/b"\n')
    store = ApprovalRuleStore(tmp_path / "rules.json", profile)
    everywhere = ApprovalRule(tool="terminal", command_prefix="git status", scope="user")
    here = ApprovalRule(tool="terminal", command_prefix="make", scope="workspace", workspace="/a")
    store.add(everywhere)
    store.add(here)
    raw = tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))
    assert raw["llm"] == {"model": "a/b"}
    assert [r["command_prefix"] for r in raw["confirmation"]["rules"]] == ["git status"]
    assert "git status" not in (tmp_path / "rules.json").read_text(encoding="utf-8")
    fresh = ApprovalRuleStore(tmp_path / "rules.json", make(tmp_path))
    assert {r.command_prefix for r in fresh.rules_for("/a")} == {"git status", "make"}
    assert {r.command_prefix for r in fresh.rules_for("/b")} == {"git status"}
    fresh.remove([everywhere.id, here.id])
    assert fresh.rules_for("/a") == []
    assert "rules" not in tomllib.loads((tmp_path / "config.toml").read_text()).get(
        "confirmation", {}
    )


def test_without_a_keyring_secrets_stay_in_memory(tmp_path: Path) -> None:
    profile = make(tmp_path)
    assert not profile.secrets.persistent
    profile.secrets.set_user_secrets({"GITHUB_TOKEN": "ghp_example_value"})
    assert profile.user_secrets() == {"GITHUB_TOKEN": "ghp_example_value"}
    assert profile.cipher() is None  # nothing saved encrypted without a keyring
    assert not (tmp_path / "config.toml").exists()  # and nothing written anywhere


def test_an_api_key_in_the_environment_wins(tmp_path: Path) -> None:
    profile = make(tmp_path, OPENAI_API_KEY="sk-from-env")
    profile.secrets.set_api_key("openai", "sk-in-memory")
    resolved = profile.api_key("openai/gpt-4o")
    assert (resolved.value, resolved.source) == ("sk-from-env", "OPENAI_API_KEY")
    other = profile.api_key("anthropic/claude-sonnet-4-5")
    assert other.value is None and other.source == "none"


def keyring_profile(tmp_path: Path) -> Profile:
    return Profile(tmp_path / "config.toml", use_keyring=True, environ={}).load()


def test_with_the_os_keyring_keys_and_secrets_outlive_the_run(
    tmp_path: Path, os_keyring: object
) -> None:
    first = keyring_profile(tmp_path)
    assert first.keyring.available and first.secrets.persistent
    first.secrets.set_api_key("anthropic", "sk-ant-example")
    first.secrets.set_user_secrets({"DEPLOY_TOKEN": "tok-example-123"})
    cipher_key = first.secrets.cipher_key()
    again = keyring_profile(tmp_path)
    assert again.api_key("anthropic/claude-sonnet-4-5").source == "keyring"
    assert again.api_key("anthropic/claude-sonnet-4-5").value == "sk-ant-example"
    assert again.user_secrets() == {"DEPLOY_TOKEN": "tok-example-123"}
    assert again.secrets.cipher_key() == cipher_key
    cipher = again.cipher()
    assert cipher is not None
    restored = cipher.decrypt(cipher.encrypt("x"))
    assert restored is not None and restored.get_secret_value() == "x"
    assert not list(tmp_path.iterdir())  # no file holds any of it


def test_without_an_os_keyring_the_problem_is_said_plainly(
    tmp_path: Path, no_keyring: None
) -> None:
    profile = keyring_profile(tmp_path)
    status = profile.keyring
    assert not status.available
    assert status.problem is not None and "keyring" in status.problem.lower()
    assert not profile.secrets.persistent and not profile.memory_chosen
    profile.use_memory_secrets()
    assert profile.memory_chosen
    profile.secrets.set_api_key("openai", "sk-session-only")
    assert profile.api_key("openai/gpt-4o").value == "sk-session-only"


@pytest.mark.parametrize(
    ("text", "environ", "expected"),
    [
        ("", {}, None),
        ('[storage]\nconversations_dir = "~/convs"\n', {}, "~/convs"),
        ("[storage]\nconversations_dir = 3\n", {}, None),
        ("[storage\n", {}, None),
        ('[storage]\nconversations_dir = "/a"\n', {"OHTUI_CONVERSATIONS_DIR": "/b"}, "/b"),
    ],
)
def test_conversations_dir_before_and_after_loading_agree(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    environ: dict[str, str],
    expected: str | None,
) -> None:
    monkeypatch.setenv("OHTUI_DATA_DIR", str(tmp_path / "data"))
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    profile = Profile(path, run_overrides(environ), use_keyring=False, environ=environ)
    quick = profile.conversations_dir  # read before the settings are validated
    want = Path(expected).expanduser() if expected else tmp_path / "data" / "conversations"
    assert quick == want
    profile.load_settings()
    assert profile.conversations_dir == want


# --- early values (read before the first frame) -----------------------------------------------


def test_early_values_as_the_file_gives_them_even_with_keys_spelled_in_escapes(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[ui]\ntheme = "nord"\n', encoding="utf-8")
    profile = Profile(config, use_keyring=False)
    assert profile.early_value("ui", "theme") == "nord"
    assert profile.early_value("ui", "screen_reader") is None
    config.write_text('[ui]\n"th\\u0065me" = "gruvbox"\n', encoding="utf-8")  # still theme
    assert profile.early_value("ui", "theme") == "gruvbox"
    config.write_text("[ui\ntheme = ", encoding="utf-8")  # broken: the settings say why
    assert profile.early_value("ui", "theme") is None
    override = run_overrides({"OHTUI_SCREEN_READER": "yes"})
    assert Profile(config, override, use_keyring=False).early_value("ui", "screen_reader")


def test_early_values_parse_the_file_once_and_again_when_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    loads = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or loads(text))
    config = tmp_path / "config.toml"
    config.write_text('[ui]\ntheme = "nord"\nscreen_reader = true\n', encoding="utf-8")
    profile = Profile(config, use_keyring=False)
    assert profile.early_value("ui", "screen_reader") is True
    assert profile.early_value("ui", "theme") == "nord"
    assert len(parsed) == 1
    config.write_text('[ui]\ntheme = "dracula"\n', encoding="utf-8")
    assert profile.early_value("ui", "theme") == "dracula"
    assert len(parsed) == 2


def test_a_file_that_sets_no_early_value_loads_no_toml_parser_before_the_first_frame(
    tmp_path: Path,
) -> None:
    """config.toml with other settings: the values read before the first frame (screen
    reader, theme) are known to be unset without loading tomllib (a few milliseconds)."""
    config = tmp_path / "config.toml"
    config.write_text('[llm]\nmodel = "anthropic/claude-sonnet-4-5"\n', encoding="utf-8")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ohtui.settings.profile import Profile\n"
        f"profile = Profile(Path({str(config)!r}), use_keyring=False)\n"
        "assert profile.early_value('ui', 'screen_reader') is None\n"
        "assert profile.early_value('ui', 'theme') is None\n"
        "print('tomllib' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
