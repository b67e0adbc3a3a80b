"""Errors of a conversation that runs on an agent server: each says which server and what to do."""

from __future__ import annotations


class RemoteServerError(RuntimeError):
    """An agent server answered a request with an error, or could not be reached."""

    def __init__(
        self,
        message: str,
        host: str,
        status_code: int | None = None,
        detail: str = "",
    ) -> None:
        super().__init__(message)
        self.host = host
        self.status_code = status_code
        self.detail = detail


class RemoteAuthenticationError(RemoteServerError):
    """The server refused the session API key (HTTP 401, or socket close code 4001)."""


class RemoteConnectionError(RemoteServerError):
    """The server could not be reached (refused, timed out, name not found)."""


class WebSocketConnectionError(RuntimeError):
    """The event socket did not subscribe in time: events might be missed."""

    def __init__(self, conversation_id: object, timeout: float, message: str | None = None):
        self.conversation_id = conversation_id
        self.timeout = timeout
        super().__init__(
            message
            or (
                f"WebSocket subscription did not complete within {timeout} seconds for "
                f"conversation {conversation_id}. Events may be missed."
            )
        )
