"""Image files a user attaches to a message: known by their bytes, bounded in size, read as
data URLs.

Standard library only, below the engine: the composer checks a file when it is attached (on
screen in the first frame, before any engine loads) and the session reads it when the message
is sent, with the same rules.
"""

from __future__ import annotations

import base64
import os
import stat
from dataclasses import dataclass
from pathlib import Path

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
"""File names offered and taken as images (the bytes decide in the end)."""
MAX_IMAGE_BYTES = 5 * 1024 * 1024 * 3 // 4
"""3.75 MiB: Anthropic refuses an image whose base64 form passes 5 MiB (OpenAI takes 20 MB)."""
MAX_MESSAGE_IMAGE_BYTES = 10 * 1024 * 1024
"""All the images of one message: their base64 form stays under an agent server's 16 MiB body."""


class ImageFileError(ValueError):
    """A file that cannot be attached as an image; the message says why and what to do."""


@dataclass(frozen=True)
class ImageFile:
    """An image file checked for attaching: where it is, what it is, how big."""

    path: Path
    mime: str
    size: int

    @property
    def name(self) -> str:
        """The file's name, as the message shows it."""
        return self.path.name


def looks_like_image(name: str) -> bool:
    """Whether a file name ends like an image's (png, jpg/jpeg, gif, webp; any case)."""
    return os.path.splitext(name)[1].lower() in IMAGE_SUFFIXES


def sniff(head: bytes) -> str | None:
    """The MIME type of image bytes by their signature (PNG, JPEG, GIF, WebP), else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def human_size(size: int) -> str:
    """A byte count as a short size: "812 B", "34 KB", "2.1 MB", "3.75 MB" (1 KB = 1024 B)."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.2f}".rstrip("0").rstrip(".") + " MB"


def check_image(path: Path) -> ImageFile:
    """The image at `path`, checked by its first bytes and its size (cheap: reads 12 bytes).

    ImageFileError when it is missing, no regular file, too large or not an image."""
    head, size = _read(path, 12)
    return _checked(path, head, size)


def data_url(path: Path) -> str:
    """The image at `path` as a `data:<mime>;base64,...` URL, checked as `check_image` does
    (on the bytes read, so a file changed since it was attached is judged as it is now)."""
    raw, size = _read(path, MAX_IMAGE_BYTES + 1)
    mime = _checked(path, raw[:12], max(size, len(raw))).mime
    return f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"


def _checked(path: Path, head: bytes, size: int) -> ImageFile:
    mime = sniff(head)
    if mime is None:
        raise ImageFileError(
            f"{path.name} is not an image ohtui can send: only PNG, JPEG, GIF and WebP files "
            "are attached (judged by their contents, not their name)."
        )
    if size > MAX_IMAGE_BYTES:
        raise ImageFileError(
            f"{path.name} is {human_size(size)}: images up to {human_size(MAX_IMAGE_BYTES)} "
            "can be sent (providers refuse larger ones). Shrink or crop it first."
        )
    return ImageFile(path, mime, size)


def _read(path: Path, limit: int) -> tuple[bytes, int]:
    """Up to `limit` bytes of the regular file at `path`, and its size. Opened without
    blocking and checked on its descriptor: a FIFO or a device is refused, not waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as stream:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                raise ImageFileError(f"{path} is not a regular file.")
            return stream.read(limit), status.st_size
    except FileNotFoundError:
        raise ImageFileError(f"{path} does not exist.") from None
    except IsADirectoryError:
        raise ImageFileError(f"{path} is a folder, not an image.") from None
    except PermissionError:
        raise ImageFileError(f"{path} cannot be read: permission denied.") from None
    except OSError as exc:
        raise ImageFileError(f"{path} cannot be read: {exc.strerror or exc}.") from None
