"""Fixtures for driving the real app: options pointing at the scripted LLM server, and SVG
snapshots kept in the repository's top-level `snapshots/` directory."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_textual_snapshot
from llm_server import ScriptedLLMServer
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet

from ohtui.tui.options import AppOptions

SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "snapshots"
FIXED_CONVERSATION_ID = "0123456789abcdef0123456789abcdef"


class _RepoSnapshots(pytest_textual_snapshot.SVGImageExtension):
    """SVG snapshots under `snapshots/<test module>/`, where reviewers look for them."""

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(SNAPSHOT_DIR / test_location.basename)


# snap_compare picks its extension up from the plugin module when it runs.
pytest_textual_snapshot.SVGImageExtension = _RepoSnapshots  # type: ignore[misc]


_parse_rules = Stylesheet._parse_rules
_parsed: dict[tuple[object, ...], list[RuleSet]] = {}


def _parse_rules_once(
    self: Stylesheet,
    css: str,
    read_from: Any,
    is_default_rules: bool = False,
    tie_breaker: int = 0,
    scope: str = "",
) -> list[RuleSet]:
    """Textual's `_parse_rules`, remembered across apps rather than per app.

    Every test opens a new app, and Textual parses every widget's CSS again for each (its
    cache lives on the app's stylesheet): ~55 ms of CPU an app, a minute of the suite. The
    parse depends only on the text and the theme's variables, both in the key; the rule sets
    are only read once parsed.
    """
    key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(self._variables.items()))
    if key not in _parsed:
        _parsed[key] = _parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
    return _parsed[key]


Stylesheet._parse_rules = _parse_rules_once  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _logs_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app logs to a file once it is up: keep that file out of the user's log directory."""
    monkeypatch.setenv("OHTUI_LOG_DIR", str(tmp_path_factory.getbasetemp() / "logs"))


@pytest.fixture
def anyio_backend() -> str:
    """Pilot tests run on asyncio."""
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The workspace the agent works in (same name in every test, for stable snapshots)."""
    path = tmp_path / "project"
    path.mkdir()
    return path


TEST_CONFIG = """\
[ui]
auto_title = false  # a title call would take the next scripted reply
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    """A config.toml for the app under test (its own, never the user's)."""
    path = tmp_path / "config" / "config.toml"
    path.parent.mkdir()
    path.write_text(TEST_CONFIG, encoding="utf-8")
    return path


@pytest.fixture
def app_options(
    tmp_path: Path, project: Path, llm_server: ScriptedLLMServer, config_file: Path
) -> AppOptions:
    """Options for an app talking to the scripted server, with a frozen clock and a fixed id."""
    return AppOptions(
        workspace=project,
        persistence_dir=tmp_path / "data" / "conversations",
        history_file=tmp_path / "data" / "history.jsonl",
        config_file=config_file,
        model="openai/test-model",
        base_url=llm_server.base_url,
        api_key="sk-test",
        clock=lambda: 0.0,
        conversation_id=FIXED_CONVERSATION_ID,
    )


async def wait_until(
    pilot: Any, condition: Callable[[], bool], timeout: float = 20.0, what: str = "condition"
) -> None:
    """Let the app run until `condition()` holds (the engine works on other threads).

    The first model call imports litellm (seconds on a loaded two-core machine), so the
    default leaves room for it; a wait that should be quick says so with `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if not pilot.app.is_running:
            crash = getattr(pilot.app, "_exception", None)
            if crash is not None:
                raise crash  # the app crashed: say why, not "timed out"
            raise AssertionError(f"the app stopped while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await pilot.pause(0.05)
    await pilot.pause()


Waiter = Callable[..., Awaitable[None]]


@pytest.fixture
def wait() -> Waiter:
    """`await wait(pilot, lambda: ..., what="...")`."""
    return wait_until
