"""Why a conversation cannot open as configured: errors whose message says what to do."""

from __future__ import annotations


class SetupError(Exception):
    """The conversation cannot start as configured; the message says what to do."""


class NoModelError(SetupError):
    """No model is configured anywhere: the user has to choose one first."""
