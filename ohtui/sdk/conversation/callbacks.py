"""Listeners whose failures are logged, never raised.

A conversation's callbacks raise to their caller, as in the SDK: a script's callback that
fails stops the run (`ConversationRunError`) instead of leaving its output silently
missing. ohtui's own listeners (the TUI's bridge, a headless printer, the server's
publisher) and those a remote conversation calls on its socket thread must never stop
anything: they are wrapped here.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


def logging_failures(callback: Callable[[T], None]) -> Callable[[T], None]:
    """`callback`, with any exception it raises logged (with its traceback) and swallowed."""

    @functools.wraps(callback)
    def guarded(item: T) -> None:
        try:
            callback(item)
        except Exception:  # a listener of ours must not stop the conversation
            logger.exception("callback %r failed", callback)

    return guarded
