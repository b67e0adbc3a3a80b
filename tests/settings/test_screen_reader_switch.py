"""Screen-reader mode's switch: `[ui] screen_reader`, OHTUI_SCREEN_READER and
--screen-reader, with the words each takes and the errors for others."""

from __future__ import annotations

from pathlib import Path

import pytest

from ohtui.cli import build_parser, options_from
from ohtui.settings.config_file import ConfigFile
from ohtui.settings.overrides import OverrideError, apply_overrides, run_overrides
from ohtui.settings.profile import Profile
from ohtui.settings.schema import Settings
from ohtui.settings.screen_reader import (
    SwitchError,
    env_switch,
    parse_switch,
    screen_reader_on,
)

ALLOWED = "1, true or yes (on), or 0, false or no (off)"


@pytest.mark.parametrize(
    ("value", "on"),
    [
        *[("1", True), ("true", True), ("YES", True), (" yes ", True), (True, True)],
        *[("0", False), ("False", False), ("no", False), (False, False)],
    ],
)
def test_the_words_of_the_switch(value: object, on: bool) -> None:
    assert parse_switch(value) is on
    assert env_switch({"OHTUI_SCREEN_READER": str(value)}) is on


@pytest.mark.parametrize("value", ["on", "maybe", "2", "y", "enabled"])
def test_any_other_word_in_the_variable_is_refused_naming_it_and_the_words(value: str) -> None:
    with pytest.raises(SwitchError) as caught:
        env_switch({"OHTUI_SCREEN_READER": value})
    assert str(caught.value) == f"OHTUI_SCREEN_READER={value!r} is not on or off: use {ALLOWED}"


def test_an_empty_or_missing_variable_leaves_it_to_the_file() -> None:
    assert env_switch({}) is None and env_switch({"OHTUI_SCREEN_READER": ""}) is None


def test_the_setting_defaults_to_off_and_validates_in_the_file(tmp_path: Path) -> None:
    assert Settings().ui.screen_reader is False
    config = tmp_path / "config.toml"
    config.write_text("[ui]\nscreen_reader = true\n", encoding="utf-8")
    assert ConfigFile(config).load().settings.ui.screen_reader is True
    config.write_text('[ui]\nscreen_reader = "sometimes"\n', encoding="utf-8")
    loaded = ConfigFile(config).load()
    assert loaded.settings.ui.screen_reader is False
    assert "ui.screen_reader" in str(loaded.error) and ALLOWED in str(loaded.error)


def test_the_variable_is_an_override_named_in_its_error() -> None:
    settings = apply_overrides(Settings(), run_overrides({"OHTUI_SCREEN_READER": "yes"}))
    assert settings.ui.screen_reader is True
    with pytest.raises(OverrideError) as caught:
        apply_overrides(Settings(), run_overrides({"OHTUI_SCREEN_READER": "maybe"}))
    assert str(caught.value).startswith(f"OHTUI_SCREEN_READER: expected {ALLOWED}")


@pytest.mark.parametrize(
    ("file", "environ", "flag", "on"),
    [
        ("", {}, False, False),
        ("screen_reader = true", {}, False, True),
        ("screen_reader = true", {"OHTUI_SCREEN_READER": "no"}, False, False),
        ("", {"OHTUI_SCREEN_READER": "1"}, False, True),
        ("screen_reader = false", {"OHTUI_SCREEN_READER": "0"}, True, True),
    ],
)
def test_the_flag_wins_then_the_variable_then_the_file(
    tmp_path: Path, file: str, environ: dict[str, str], flag: bool, on: bool
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[ui]\n{file}\n", encoding="utf-8")
    profile = Profile(config, run_overrides(environ, screen_reader=flag), use_keyring=False)
    assert screen_reader_on(profile.early_value("ui", "screen_reader")) is on
    assert profile.settings.ui.screen_reader is on


def test_the_command_line_flag_reaches_the_app_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OHTUI_SCREEN_READER", raising=False)
    options = options_from(build_parser().parse_args(["--screen-reader"]))
    assert options.screen_reader is True
    assert options.overrides()[("ui", "screen_reader")].origin == "--screen-reader"
    assert options_from(build_parser().parse_args([])).screen_reader is False


def test_help_documents_the_flag_and_the_variable() -> None:
    text = " ".join(build_parser().format_help().split())
    assert "--screen-reader screen-reader mode: plain text lines" in text
    assert "OHTUI_SCREEN_READER [ui] screen_reader" in text


def test_the_example_config_documents_the_setting() -> None:
    example = Path(__file__).resolve().parents[2] / "config.example.toml"
    text = example.read_text(encoding="utf-8")
    assert "\nscreen_reader = false\n" in text and "OHTUI_SCREEN_READER" in text
