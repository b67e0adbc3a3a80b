"""Images attached to a draft: shown in the composer as chips, sent as image parts.

A chip such as "[image: shot.png 34 KB]" stands in the text where the image was attached (by
an `@` mention, a completion or a pasted path); it is kept in the text sent, so the model and
the transcript both name the image, and the image goes with the message as long as its chip
does (Backspace right after a chip removes it).

Terminals paste a dragged or copied file as its path: bare, quoted ('…' or "…"), with its
spaces escaped (`My\\ Shot.png`), or as a `file://` URL, several at once separated by spaces.
No terminal passes an image's bytes through a paste (bracketed paste carries text only).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ohtui.image_file import ImageFile, check_image, human_size, looks_like_image

_CHIP = re.compile(r"\[image: [^\]\n]+\]")
_MENTION = re.compile(r"(?<!\S)@(\S+)")
MAX_PASTED_PATHS = 10


def chip_label(image: ImageFile, taken: Sequence[str] = ()) -> str:
    """The chip for `image`, distinct from the chips `taken` (a number is added if needed)."""
    base = f"{image.name} {human_size(image.size)}"
    label, number = f"[image: {base}]", 2
    while label in taken:
        label, number = f"[image: {base} #{number}]", number + 1
    return label


def pasted_paths(text: str, workspace: Path | None) -> list[Path] | None:
    """The image files a paste names, when it is nothing but paths to image files that exist
    (as terminals paste dragged or copied files); None for any other paste."""
    import shlex  # on a paste only: off the first frame

    stripped = text.strip()
    if not stripped or "\n" in stripped or len(stripped) > 4096:
        return None
    whole = _as_path(stripped, workspace)  # one path with bare spaces in it
    if whole is not None and looks_like_image(whole.name) and whole.is_file():
        return [whole]
    try:
        words = shlex.split(stripped)
    except ValueError:  # an unbalanced quote: not a pasted path
        return None
    if not words or len(words) > MAX_PASTED_PATHS:
        return None
    paths = [_as_path(word, workspace) for word in words]
    if all(path is not None and looks_like_image(path.name) and path.is_file() for path in paths):
        return [path for path in paths if path is not None]
    return None


def _as_path(word: str, workspace: Path | None) -> Path | None:
    if word.startswith("file://"):
        from urllib.parse import unquote, urlparse

        url = urlparse(word)
        if url.netloc not in ("", "localhost"):
            return None
        word = unquote(url.path)
    path = Path(word).expanduser()
    if not path.is_absolute():
        if workspace is None:
            return None
        path = workspace / path
    return path


def mentioned_images(text: str, workspace: Path | None) -> list[tuple[int, int, Path]]:
    """The `@mentions` in `text` of image files in `workspace` (or absolute paths), as
    (start, end, file); mentions of files that do not exist are left as text."""
    found: list[tuple[int, int, Path]] = []
    for match in _MENTION.finditer(text):
        word = match.group(1)
        if not looks_like_image(word):
            continue
        path = _as_path(word, workspace)
        if path is not None and path.is_file():
            found.append((match.start(), match.end(), path))
    return found


class AttachedImages:
    """The images of one draft, by the chip that stands for each."""

    def __init__(self) -> None:
        self._images: dict[str, ImageFile] = {}

    def attach(self, image: ImageFile) -> str:
        """Keep `image` and return its chip (the same one for a file attached again)."""
        for label, kept in self._images.items():
            if kept.path == image.path:
                return label
        label = chip_label(image, list(self._images))
        self._images[label] = image
        return label

    def restore(self, text: str, images: Sequence[ImageFile]) -> None:
        """Take back the images of a draft that was not sent, in the order of their chips."""
        self._images.clear()
        labels = [match.group(0) for match in _CHIP.finditer(text)]
        for label, image in zip(labels, images, strict=False):
            self._images[label] = image

    def in_text(self, text: str) -> list[ImageFile]:
        """The images whose chips `text` shows, in the order they appear."""
        return [
            self._images[match.group(0)]
            for match in _CHIP.finditer(text)
            if match.group(0) in self._images
        ]

    def chip_ending(self, text: str) -> int:
        """The length of the image chip `text` ends with (0 if it ends with none)."""
        for label in self._images:
            if text.endswith(label):
                return len(label)
        return 0

    def clear(self) -> None:
        """Forget every image (the draft was sent or cleared)."""
        self._images.clear()


def shown_text(text: str, image_count: int) -> str:
    """A user message as the transcript shows it: its text, and a placeholder for each image
    its text does not name with a chip (images sent by a script or another front end)."""
    unnamed = image_count - len(_CHIP.findall(text))
    if unnamed <= 0:
        return text
    extra = "[image]" if unnamed == 1 else f"[{unnamed} images]"
    return f"{text}\n{extra}" if text else extra


__all__ = [
    "AttachedImages",
    "ImageFile",
    "check_image",
    "chip_label",
    "mentioned_images",
    "pasted_paths",
    "shown_text",
]
