"""REST calls to an agent server, with errors turned into sentences (RemoteServerError)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ohtui.sdk.conversation.impl.remote_errors import (
    RemoteAuthenticationError,
    RemoteConnectionError,
    RemoteServerError,
)

if TYPE_CHECKING:
    import httpx

    from ohtui.sdk.workspace.remote import RemoteWorkspace


def request(
    workspace: RemoteWorkspace,
    method: str,
    path: str,
    *,
    json: Any = None,
    params: dict[str, Any] | None = None,
    allow: tuple[int, ...] = (),
    timeout: float | None = None,
) -> httpx.Response:
    """Send one request; statuses in `allow` are returned, other errors raised as
    RemoteAuthenticationError (401), RemoteConnectionError (unreachable) or
    RemoteServerError (any other error status)."""
    import httpx

    host = workspace.display_host
    try:
        response = workspace.client.request(
            method,
            path,
            json=json,
            params=params,
            timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )
    except httpx.TimeoutException as exc:
        raise RemoteConnectionError(
            f"The agent server at {host} did not answer {method} {path} in time ({exc}).",
            host,
        ) from exc
    except httpx.TransportError as exc:
        raise RemoteConnectionError(
            f"Cannot reach the agent server at {host} ({exc or type(exc).__name__}). Check that "
            "it is running and that the URL is right.",
            host,
        ) from exc
    try:
        response.raise_for_status()  # any answer but a 2xx, redirects included
    except httpx.HTTPStatusError:
        if response.status_code in allow:
            return response
        raise error_for(workspace, method, path, response) from None
    return response


def error_for(
    workspace: RemoteWorkspace, method: str, path: str, response: httpx.Response
) -> RemoteServerError:
    """The error a failed response stands for."""
    host = workspace.display_host
    detail = detail_of(response)
    status = response.status_code
    if status == 401:
        key = "the session API key" if workspace.api_key else "no session API key"
        return RemoteAuthenticationError(
            f"The agent server at {host} refused {key} (HTTP 401). Set the right key "
            "(OHTUI_SERVER_API_KEY, or the key saved for this server) and try again.",
            host,
            status,
            detail,
        )
    return RemoteServerError(
        f"The agent server at {host} answered {status} to {method} {path}: {detail}",
        host,
        status,
        detail,
    )


def detail_of(response: httpx.Response) -> str:
    """The server's own words for an error (its `detail`), else the body's start."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    if isinstance(body, dict) and body.get("detail"):
        detail = body["detail"]
        return detail if isinstance(detail, str) else str(detail)[:300]
    return str(body)[:300]
