"""Reading an agent server's `/search` listings page by page.

A listing answers `{"items": [...], "next_page_id": id or null}`; the next page is asked for
with `page_id`. Conversations, a conversation's events and its preview are all read this way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ohtui.sdk.conversation.impl.rest import request

if TYPE_CHECKING:
    from ohtui.sdk.workspace.remote import RemoteWorkspace


def search_pages(
    workspace: RemoteWorkspace,
    path: str,
    params: Mapping[str, Any],
    *,
    page_size: int,
    wanted: int | None = None,
) -> list[Any]:
    """The items of the listing at `path` (`params` on every request), in the server's
    order: every page up to the last one, or until `wanted` items were read (none asked
    beyond them). RemoteServerError family when the server refuses or cannot be reached."""
    items: list[Any] = []
    page_id: str | None = None
    while wanted is None or len(items) < wanted:
        limit = page_size if wanted is None else min(page_size, wanted - len(items))
        query: dict[str, Any] = {"limit": limit, **params}
        if page_id:
            query["page_id"] = page_id
        body = request(workspace, "GET", path, params=query).json()
        items += body.get("items", [])
        page_id = body.get("next_page_id")
        if not page_id:
            break
    return items
