"""A `session/prompt`'s content blocks as the user message the engine takes: text as it is,
a resource link as the file it names, an embedded resource as its text in a tagged block, an
image as an image when the model reads them.

Imported once the engine and the protocol package have loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from ohtui.sdk import ImageContent, Message, TextContent

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


class PromptContentError(ValueError):
    """A prompt block ohtui cannot hand to the model (the message says which, and why)."""


def to_message(blocks: Sequence[Any], takes_images: bool, model: str) -> Message:
    """The user message for `blocks`; PromptContentError for an image the model cannot read
    or a block of a kind ohtui does not take (audio)."""
    parts: list[TextContent | ImageContent] = []
    texts: list[str] = []

    def flush() -> None:
        if texts:
            parts.append(TextContent(text="\n\n".join(texts)))
            texts.clear()

    for index, block in enumerate(blocks, 1):
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            texts.append(_link(block))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                texts.append(_embedded(resource))
            elif isinstance(resource, BlobResourceContents) and _is_image(resource.mime_type):
                flush()
                parts.append(_image(resource.blob, resource.mime_type or "", takes_images, model))
            else:
                mime = getattr(resource, "mime_type", None) or "binary"
                texts.append(
                    f"(A {mime} resource was attached, {_path(resource.uri)}; its "
                    "content cannot be shown here.)"
                )
        elif isinstance(block, ImageContentBlock):
            flush()
            parts.append(_image(block.data, block.mime_type, takes_images, model))
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise PromptContentError(
                f"prompt block {index} is {kind} content, which ohtui does not take: send text, "
                "images, resource links or embedded resources"
            )
    flush()
    if not parts:
        raise PromptContentError("the prompt is empty: send some text")
    return Message(role="user", content=parts)


def has_image(block: Any) -> bool:
    """Whether a prompt block is an image (or embeds one)."""
    if isinstance(block, ImageContentBlock):
        return True
    return isinstance(block, EmbeddedResourceContentBlock) and (
        isinstance(block.resource, BlobResourceContents) and _is_image(block.resource.mime_type)
    )


def _image(data: str, mime: str, takes_images: bool, model: str) -> ImageContent:
    if not takes_images:
        raise PromptContentError(
            f"the model {model} does not read images (or vision is turned off): send text, "
            "or choose a model that takes images"
        )
    if not _is_image(mime):
        raise PromptContentError(
            f"an image of type {mime or 'unknown'} cannot be sent: use PNG, JPEG, GIF or WebP"
        )
    return ImageContent(image_urls=[f"data:{mime};base64,{data}"])


def _is_image(mime: str | None) -> bool:
    return (mime or "").lower() in IMAGE_TYPES


def _link(block: ResourceContentBlock) -> str:
    return f"[@{block.name}]({block.uri}) (the file {_path(block.uri)})"


def _embedded(resource: TextResourceContents) -> str:
    return f'<context ref="{resource.uri}">\n{resource.text}\n</context>'


def _path(uri: str) -> str:
    """A file URI's path; any other URI as it is."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return uri
