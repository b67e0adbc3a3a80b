"""[context] and [agent] plugins in config.toml: defaults, validation messages that name the
key and the allowed values, round trips, and the agent each strategy builds."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from ohtui.opening.agent import plugin_sources
from ohtui.opening.context import agent_context_options
from ohtui.sdk import (
    LLM,
    LLMSummarizingCondenser,
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)
from ohtui.settings.choices import ContextStrategy
from ohtui.settings.config_file import ConfigFile
from ohtui.settings.schema import ContextSettings, Settings


def load(tmp_path: Path, text: str) -> ConfigFile:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return ConfigFile(path)


def test_the_default_is_a_summarizing_condenser_acting_when_the_window_is_full() -> None:
    context = Settings().context
    assert context.strategy is ContextStrategy.SUMMARIZING_CONDENSER
    assert (context.max_size, context.keep_first) == (80, 4)
    assert context.threshold is None and context.trigger == 1.0


def test_an_unknown_strategy_names_the_key_its_line_and_the_allowed_values(
    tmp_path: Path,
) -> None:
    loaded = load(tmp_path, '[context]\nstrategy = "compact"\n').load()
    assert loaded.error is not None
    message = str(loaded.error)
    assert "line 2" in message and "context.strategy" in message
    for allowed in ("none", "summarizing_condenser", "sliding_window", "summarizing_manager"):
        assert f"'{allowed}'" in message
    assert '(found "compact")' in message
    assert loaded.settings.context.strategy is ContextStrategy.SUMMARIZING_CONDENSER


@pytest.mark.parametrize(
    ("line", "key", "expected"),
    [
        ("threshold = 1.5", "context.threshold", "expected a number at most 1 (found 1.5)"),
        ("threshold = 0", "context.threshold", "expected a number greater than 0"),
        ("summary_ratio = 0.95", "context.summary_ratio", "at most 0.8"),
        ("window_size = -1", "context.window_size", "at least 0"),
        ("max_input_tokens = 0", "context.max_input_tokens", "greater than 0"),
        ('max_size = "big"', "context.max_size", "expected a whole number"),
    ],
)
def test_out_of_range_values_name_the_key_and_the_bound(
    tmp_path: Path, line: str, key: str, expected: str
) -> None:
    loaded = load(tmp_path, f"[context]\n{line}\n").load()
    assert loaded.error is not None
    assert key in str(loaded.error) and expected in str(loaded.error)


def test_keep_first_must_leave_room_to_condense(tmp_path: Path) -> None:
    loaded = load(tmp_path, "[context]\nmax_size = 20\nkeep_first = 9\n").load()
    assert loaded.error is not None
    assert "keep_first (9) must be less than max_size // 2 - 1 (9)" in str(loaded.error)
    # Under another strategy the condenser's keys do not matter.
    ok = load(tmp_path, '[context]\nstrategy = "none"\nmax_size = 20\nkeep_first = 9\n').load()
    assert ok.error is None


def test_plugins_take_strings_with_a_ref_and_tables_and_round_trip(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        '[agent]\nplugins = ["~/mine", "github:acme/tools#v1.2", '
        '{ source = "https://example.com/mono.git", ref = "main", repo_path = "plugins/x" }]\n',
    )
    settings = config.load().settings
    sources = plugin_sources(settings.agent.plugins)
    assert sources is not None
    assert [(s.source, s.ref, s.repo_path) for s in sources] == [
        ("~/mine", None, None),
        ("github:acme/tools", "v1.2", None),
        ("https://example.com/mono.git", "main", "plugins/x"),
    ]
    config.save(settings)
    written = tomllib.loads(config.path.read_text(encoding="utf-8"))
    assert written["agent"]["plugins"][:2] == ["~/mine", "github:acme/tools#v1.2"]
    assert written["agent"]["plugins"][2]["repo_path"] == "plugins/x"
    assert plugin_sources([]) is None  # a resume then loads the plugins it was pinned to


def test_a_blank_or_malformed_plugin_entry_is_named(tmp_path: Path) -> None:
    blank = load(tmp_path, '[agent]\nplugins = ["  "]\n').load()
    assert blank.error is not None
    assert "agent.plugins[0]" in str(blank.error) and "empty" in str(blank.error)
    number = load(tmp_path, "[agent]\nplugins = [3]\n").load()
    assert number.error is not None
    assert 'expected "source", "source#ref" or a table' in str(number.error)


LLM_ = LLM(model="openai/test-model", api_key="sk-test", max_input_tokens=10_000)


def test_each_strategy_builds_its_condenser_or_manager() -> None:
    condenser = agent_context_options(ContextSettings(threshold=0.5), LLM_)["condenser"]
    assert isinstance(condenser, LLMSummarizingCondenser)
    assert (condenser.max_size, condenser.keep_first, condenser.max_tokens) == (80, 4, 5000)
    assert condenser.llm.usage_id == "condenser" and condenser.llm.stream is False

    window = agent_context_options(
        ContextSettings(strategy=ContextStrategy.SLIDING_WINDOW, window_size=12), LLM_
    )["conversation_manager"]
    assert isinstance(window, SlidingWindowConversationManager)
    assert window.window_size == 12 and window.proactive_compression is None

    summarizing = agent_context_options(
        ContextSettings(
            strategy=ContextStrategy.SUMMARIZING_MANAGER,
            summary_ratio=0.5,
            preserve_recent_messages=3,
            threshold=0.6,
        ),
        LLM_,
    )["conversation_manager"]
    assert isinstance(summarizing, SummarizingConversationManager)
    assert summarizing.summary_ratio == 0.5 and summarizing.preserve_recent_messages == 3
    assert summarizing.proactive_compression == {"compression_threshold": 0.6}

    assert agent_context_options(ContextSettings(strategy=ContextStrategy.NONE), LLM_) == {}


def test_a_threshold_without_a_known_window_leaves_the_condenser_to_its_event_count() -> None:
    unknown = LLM(model="openai/test-model", api_key="sk-test")
    condenser = agent_context_options(ContextSettings(threshold=0.5), unknown)["condenser"]
    assert condenser.max_tokens is None


def test_the_trigger_is_the_threshold_except_with_no_strategy() -> None:
    assert ContextSettings(threshold=0.7).trigger == 0.7
    assert ContextSettings(strategy=ContextStrategy.NONE, threshold=0.7).trigger == 1.0
