"""The models remembered for /model: the recent ones, most recent first and bounded; each
conversation's choice, kept while the settings name the model it was made over."""

from __future__ import annotations

import json
from pathlib import Path

from ohtui.settings.model_memory import MAX_RECENT, ModelChoice, ModelMemory


def test_recent_models_are_most_recent_first_without_repeats(tmp_path: Path) -> None:
    memory = ModelMemory(tmp_path / "models.json")
    for model in ("a/one", "b/two", "a/one", "c/three"):
        memory.remember(model, None, None)
    assert memory.recent() == ["c/three", "a/one", "b/two"]
    assert ModelMemory(tmp_path / "models.json").recent() == ["c/three", "a/one", "b/two"]


def test_recent_models_are_bounded(tmp_path: Path) -> None:
    memory = ModelMemory(None)
    for i in range(MAX_RECENT + 5):
        memory.remember(f"p/m{i}", None, None)
    recent = memory.recent()
    assert len(recent) == MAX_RECENT and recent[0] == f"p/m{MAX_RECENT + 4}"


def test_a_conversations_choice_stands_while_the_settings_are_unchanged(tmp_path: Path) -> None:
    memory = ModelMemory(tmp_path / "models.json")
    memory.remember("anthropic/claude", "abc", "openai/gpt-4o")
    choice = ModelMemory(tmp_path / "models.json").choice("abc")
    assert choice == ModelChoice("anthropic/claude", "openai/gpt-4o")
    assert choice.applies("openai/gpt-4o")
    assert not choice.applies("openai/gpt-5")  # the settings changed since: theirs is newer
    assert memory.choice("other") is None


def test_a_damaged_file_is_read_as_empty_and_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text("{not json", encoding="utf-8")
    memory = ModelMemory(path)
    assert memory.recent() == [] and memory.choice("abc") is None
    memory.remember("a/one", "abc", None)
    assert json.loads(path.read_text(encoding="utf-8"))["recent"] == ["a/one"]
