"""Errors every layer of the server shares. This module imports nothing."""

from __future__ import annotations

STOPPING = "ohtui serve is stopping: try again once it runs again."
"""What a request refused while the server stops is told (HTTP 503)."""


class StoppingError(Exception):
    """The server is stopping: nothing opens or is created any more (HTTP 503)."""

    def __init__(self, message: str = STOPPING) -> None:
        super().__init__(message)


class UnknownEventError(LookupError):
    """A fork or a move of HEAD named an event the conversation does not have (HTTP 400 for
    a fork, 404 for a move, as the OpenHands server answers)."""
