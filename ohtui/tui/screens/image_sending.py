"""Images on their way out: a message with images is sent only to a model that reads them.

A model that does not read images (`LLM.vision_is_active()`) gets nothing: the message is
not sent, the draft stays in the composer with its chips, and a notification says why and
what to do. Sending its text alone would answer a question about a picture nobody saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ohtui.image_file import (
    MAX_MESSAGE_IMAGE_BYTES,
    ImageFile,
    ImageFileError,
    check_image,
    human_size,
)

if TYPE_CHECKING:
    from ohtui.tui.screens.chat import ChatScreen

TITLE = "Not sent"
OPENING = "The conversation is still opening: send the image once it has opened."
NO_VISION = (
    "{model} does not accept images, so the message was not sent (nothing was dropped: it is "
    "still in the composer). Remove the image (Backspace after its chip) to send the text "
    "alone, or switch to a model that reads images."
)
VISION_OFF = (
    "Images are turned off for {model} (disable_vision), so the message was not sent: it is "
    "still in the composer. Remove the image (Backspace after its chip) to send the text alone."
)
TOO_MUCH = (
    "These images come to {size}; one message takes up to {limit} of images. "
    "Send them in more than one message."
)


def refusal(screen: ChatScreen, images: Sequence[ImageFile]) -> str | None:
    """Why `images` cannot go to the conversation's model now (None: they can)."""
    conversation = screen.session.conversation
    if conversation is None:
        return OPENING
    llm = conversation.agent.llm
    if not llm.vision_is_active():
        return (VISION_OFF if llm.disable_vision else NO_VISION).format(model=llm.model)
    total = sum(image.size for image in images)
    if total > MAX_MESSAGE_IMAGE_BYTES:
        return TOO_MUCH.format(size=human_size(total), limit=human_size(MAX_MESSAGE_IMAGE_BYTES))
    return None


def may_send(screen: ChatScreen, images: Sequence[ImageFile]) -> bool:
    """Whether `images` can go to the conversation's model; if not, the user is told why.

    Each file is checked again (12 bytes read): it may have changed since it was attached.
    The sending thread reads and encodes them."""
    why = refusal(screen, images)
    if why is None:
        try:
            for image in images:
                check_image(image.path)
        except ImageFileError as exc:
            why = str(exc)
    if why is None:
        return True
    screen.notify(why, title=TITLE, severity="warning", timeout=12)
    return False
