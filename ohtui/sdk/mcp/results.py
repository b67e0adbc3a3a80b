"""An MCP `CallToolResult` as an observation: text joined, images as images, errors flagged."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ohtui.sdk.llm.message import ImageContent, TextContent
from ohtui.sdk.mcp.definition import MCPToolObservation

if TYPE_CHECKING:
    from mcp import types


def observation_from_result(
    server: str, tool: str, result: types.CallToolResult
) -> MCPToolObservation:
    """Text blocks (and embedded text resources) joined into one text, images as data URLs,
    other blocks named; structured content when there is nothing else to show."""
    from mcp import types

    texts: list[str] = []
    images: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.ImageContent):
            images.append(f"data:{block.mimeType};base64,{block.data}")
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.TextResourceContents):
                texts.append(resource.text)
            else:
                texts.append(
                    f"[binary resource {resource.uri} ({resource.mimeType or 'unknown type'})]"
                )
        elif isinstance(block, types.ResourceLink):
            texts.append(f"[resource link: {block.uri}]")
        elif isinstance(block, types.AudioContent):
            texts.append(f"[audio ({block.mimeType}) not shown]")
    if not texts and result.structuredContent is not None:
        texts.append(json.dumps(result.structuredContent, ensure_ascii=False))
    if not texts and not images:
        texts.append("(the tool returned no content)")
    content: list[TextContent | ImageContent] = (
        [TextContent(text="\n".join(texts))] if texts else []
    )
    if images:
        content.append(ImageContent(image_urls=images))
    return MCPToolObservation(
        content=content, is_error=bool(result.isError), server=server, tool=tool
    )
