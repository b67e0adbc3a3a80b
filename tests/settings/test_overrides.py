"""Environment variables and flags override config.toml for one run, and say when they are wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from ohtui.settings.overrides import (
    ENV_VARS,
    Override,
    OverrideError,
    apply_overrides,
    env_overrides,
    run_overrides,
)
from ohtui.settings.schema import Settings


def test_every_variable_names_a_real_setting() -> None:
    for name, (table, key) in ENV_VARS.items():
        assert name.startswith("OHTUI_")
        section = Settings.model_fields[table].annotation
        assert isinstance(section, type) and key in section.model_fields, name


def test_environment_overrides_the_file_and_flags_override_the_environment() -> None:
    settings = Settings()
    settings.llm.model = "from/file"
    settings.llm.timeout = 60
    environ = {
        "OHTUI_MODEL": "from/env",
        "OHTUI_TEMPERATURE": "0.3",
        "OHTUI_CONFIRM": "never",
        "OHTUI_BASE_URL": "",  # empty: unset
        "UNRELATED": "x",
    }
    result = apply_overrides(settings, run_overrides(environ, model="from/flag", policy="always"))
    assert result.llm.model == "from/flag"
    assert result.llm.temperature == 0.3
    assert result.llm.timeout == 60  # the file's value stays
    assert result.llm.base_url is None
    assert result.confirmation.policy == "always"
    assert settings.llm.model == "from/file"  # the original is untouched


def test_no_overrides_returns_the_same_settings() -> None:
    settings = Settings()
    assert apply_overrides(settings, env_overrides({})) is settings


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"OHTUI_TEMPERATURE": "hot"}, 'OHTUI_TEMPERATURE: expected a number (found "hot").'),
        ({"OHTUI_MAX_ITERATIONS": "0"}, "OHTUI_MAX_ITERATIONS: expected a number at least 1"),
        ({"OHTUI_CONFIRM": "maybe"}, "OHTUI_CONFIRM: expected one of 'always', 'risky' or"),
        ({"OHTUI_BASE_URL": "localhost"}, "OHTUI_BASE_URL: must start with http://"),
    ],
)
def test_a_bad_variable_is_named(environ: dict[str, str], message: str) -> None:
    with pytest.raises(OverrideError) as caught:
        apply_overrides(Settings(), env_overrides(environ))
    assert str(caught.value).startswith(message)


def test_a_bad_flag_is_named() -> None:
    with pytest.raises(OverrideError, match=r"^--base-url: must start with http"):
        apply_overrides(Settings(), {("llm", "base_url"): Override("ftp://x", "--base-url")})


def test_storage_override_expands_the_home_directory() -> None:
    result = apply_overrides(Settings(), env_overrides({"OHTUI_CONVERSATIONS_DIR": "~/convs"}))
    assert result.storage.conversations_dir == Path("~/convs").expanduser()
