"""The models the user switched to with `/model`: the recent ones (offered first by the
picker) and, per conversation, the model chosen for it, so that resuming it keeps that model.

A choice is kept with the settings' model it was made over: resumed while the settings still
name that model, the conversation goes on with its chosen one; once the settings name
another (the user changed them since, or this run's `--model` asks for one), the newer
choice, the settings', wins.

Kept in a small JSON file of the data dir (`paths.model_memory_file`), read and replaced
under a lock so that two ohtui processes lose neither's choice; without a file (tests) it
lasts for the process. File I/O: call from a worker thread.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ohtui.settings.shared_file import locked, replace_text

logger = logging.getLogger(__name__)

MAX_RECENT = 10
"""How many recent models are kept."""
MAX_CHOICES = 500
"""How many conversations' choices are kept (the oldest are dropped first)."""


@dataclass(frozen=True)
class ModelChoice:
    """The model a conversation was switched to, and the settings' model at the time."""

    model: str
    over: str | None
    """The model the settings named when the choice was made (None: none)."""

    def applies(self, settings_model: str | None) -> bool:
        """Whether the choice still stands: the settings have not named another model since."""
        return (settings_model or None) == self.over


class ModelMemory:
    """Recent models and each conversation's chosen model; thread-safe."""

    def __init__(self, path: Path | None) -> None:
        """`path`: the JSON file; None keeps everything in memory."""
        self.path = path
        self._lock = threading.Lock()
        self._memory: dict[str, Any] = {}

    def recent(self) -> list[str]:
        """The models switched to, most recent first."""
        recent = self._read().get("recent")
        if not isinstance(recent, list):
            return []
        return [m for m in recent if isinstance(m, str) and m.strip()][:MAX_RECENT]

    def choice(self, conversation_id: str) -> ModelChoice | None:
        """The model chosen for a conversation (None: none was)."""
        entry = self._read().get("conversations", {}).get(conversation_id)
        if not isinstance(entry, dict) or not isinstance(entry.get("model"), str):
            return None
        over = entry.get("over")
        return ModelChoice(entry["model"], over if isinstance(over, str) else None)

    def remember(self, model: str, conversation_id: str | None, over: str | None) -> None:
        """Put `model` first among the recent ones and, with a `conversation_id`, keep it as
        that conversation's choice made over the settings' model `over`. An I/O error is
        logged, never raised: the switch itself has happened."""

        def change(data: dict[str, Any]) -> None:
            recent = [m for m in data.get("recent") or [] if isinstance(m, str) and m != model]
            data["recent"] = [model, *recent][:MAX_RECENT]
            if conversation_id is None:
                return
            choices = data.get("conversations")
            choices = dict(choices) if isinstance(choices, dict) else {}
            choices.pop(conversation_id, None)  # re-added last: the newest
            choices[conversation_id] = {"model": model, "over": over}
            data["conversations"] = dict(list(choices.items())[-MAX_CHOICES:])

        with self._lock:
            if self.path is None:
                data = json.loads(json.dumps(self._memory))
                change(data)
                self._memory = data
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with locked(self.path.with_suffix(".lock")):
                    data = self._read()
                    change(data)
                    replace_text(self.path, json.dumps(data, indent=1))
            except OSError as exc:
                logger.warning("the model memory %s was not saved: %s", self.path, exc)

    def _read(self) -> dict[str, Any]:
        if self.path is None:
            return dict(self._memory)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            logger.warning("the model memory %s cannot be read: %s", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}
