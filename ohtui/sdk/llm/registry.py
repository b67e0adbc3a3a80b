"""LLMRegistry: the LLMs a conversation uses, by usage_id."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from ohtui.sdk.llm.llm import LLM


@dataclass(frozen=True)
class RegistryEvent:
    """What a registry tells its subscribers: an LLM was added."""

    llm: LLM


RegistryListener = Callable[[RegistryEvent], None]


class LLMRegistry:
    """Holds each LLM under its usage_id and tells subscribers when one is added."""

    def __init__(self) -> None:
        self._llms: dict[str, LLM] = {}
        self._listeners: list[RegistryListener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: RegistryListener) -> None:
        """Call `listener(RegistryEvent(llm))` for every LLM added from now on."""
        with self._lock:
            self._listeners.append(listener)

    def add(self, llm: LLM) -> None:
        """Register `llm`; ValueError if another LLM already has its usage_id."""
        with self._lock:
            existing = self._llms.get(llm.usage_id)
            if existing is llm:
                return
            if existing is not None:
                raise ValueError(
                    f"an LLM with usage_id '{llm.usage_id}' is already registered; "
                    "give each LLM its own usage_id"
                )
            self._llms[llm.usage_id] = llm
            listeners = list(self._listeners)
        event = RegistryEvent(llm=llm)
        for listener in listeners:
            listener(event)

    def get(self, usage_id: str) -> LLM:
        """The LLM registered under `usage_id` (KeyError if none)."""
        with self._lock:
            if usage_id not in self._llms:
                raise KeyError(f"no LLM registered with usage_id '{usage_id}'")
            return self._llms[usage_id]

    def remove(self, usage_id: str) -> None:
        """Forget the LLM under `usage_id`, if any (its metrics stay in the stats)."""
        with self._lock:
            self._llms.pop(usage_id, None)

    def list_usage_ids(self) -> list[str]:
        """All registered usage ids."""
        with self._lock:
            return list(self._llms)
