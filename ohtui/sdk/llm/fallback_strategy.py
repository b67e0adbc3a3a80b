"""FallbackStrategy: other LLMs, by profile name, to ask when the primary one fails for good.

A call that still fails after the primary LLM's own retries with a transient error (rate
limit, timeout, server down, no answer) is made with each fallback in turn until one
answers. Fallback is per call: the next call starts with the primary again. What a
fallback spent is added to the primary's metrics (and to the fallback's own).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ohtui.sdk.llm.exceptions import LLMCancelledError, LLMError

if TYPE_CHECKING:
    from ohtui.sdk.llm.llm import LLM, LLMResponse
    from ohtui.sdk.llm.llm_profile_store import LLMProfileStore
    from ohtui.sdk.llm.metrics import Metrics

logger = logging.getLogger(__name__)


class FallbackStrategy(BaseModel):
    """Ordered LLM profiles (see `LLMProfileStore`) to try when the primary LLM fails."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    fallback_llms: list[str] = Field(
        description="Profile names to try, in order, on a transient failure."
    )
    profile_store_dir: str | Path | None = Field(
        default=None,
        description="The profiles' folder; ~/.openhands/profiles when unset.",
    )

    _resolved: dict[str, LLM] = PrivateAttr(default_factory=dict)
    _store: LLMProfileStore | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def should_fallback(self, error: Exception) -> bool:
        """Whether `error` is one a fallback may help with: transient, not a cancel."""
        return (
            isinstance(error, LLMError)
            and error.retryable
            and not isinstance(error, LLMCancelledError)
        )

    def try_fallback(
        self,
        primary_model: str,
        primary_error: Exception,
        primary_metrics: Metrics,
        call_fn: Callable[[Any], LLMResponse],
    ) -> LLMResponse | None:
        """The first fallback's answer to `call_fn(fallback_llm)`, its spending merged into
        `primary_metrics`; None when every fallback failed (the caller raises its error)."""
        from ohtui.sdk.llm.metrics import Metrics

        total = len(self.fallback_llms)
        tried = 0
        for index, fallback in enumerate(self._fallbacks()):
            tried += 1
            logger.warning(
                "LLM %s failed (%s); trying fallback %d/%d (%s)",
                primary_model,
                type(primary_error).__name__,
                index + 1,
                total,
                fallback.model,
            )
            # The call is counted on its own, then added to the fallback's and the primary's
            # totals; a fallback never falls back itself (no chains, no loops).
            own = fallback.metrics
            spent = Metrics(model_name=fallback.model)
            strategy = fallback.fallback_strategy
            fallback.restore_metrics(spent)
            fallback.fallback_strategy = None
            try:
                result = call_fn(fallback)
            except Exception as error:  # noqa: BLE001 - the next fallback may answer
                logger.warning("fallback %s failed: %s", fallback.model, error)
                continue
            finally:
                fallback.fallback_strategy = strategy
                fallback.restore_metrics(own)
                own.merge(spent)
            primary_metrics.merge(spent)
            return result
        if tried:
            logger.error("every fallback LLM failed; the primary's error stands")
        return None

    def _fallbacks(self) -> Iterator[LLM]:
        """The fallback LLMs in order, each profile loaded on first need and kept (one
        that fails to load is skipped, and tried again on the next call)."""
        for name in self.fallback_llms:
            with self._lock:
                llm = self._resolved.get(name)
            if llm is None:
                try:
                    llm = self._profile_store().load(name)
                except (FileNotFoundError, ValueError) as error:
                    logger.error("fallback profile %r could not be loaded: %s", name, error)
                    continue
                with self._lock:
                    llm = self._resolved.setdefault(name, llm)
            yield llm

    def _profile_store(self) -> LLMProfileStore:
        if self._store is None:
            from ohtui.sdk.llm.llm_profile_store import LLMProfileStore

            self._store = LLMProfileStore(self.profile_store_dir)
        return self._store
