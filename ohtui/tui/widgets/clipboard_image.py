"""An image on the system clipboard (a screenshot copied, not saved), read for Ctrl+V.

No terminal hands an application the image on its clipboard through a paste: bracketed
paste carries text only (kitty's and Ghostty's OSC 5522 clipboard protocol is the one
exception, and few terminals speak it). So, as Claude Code and Codex do, ohtui asks the
system clipboard itself, with the tool the desktop has: `wl-paste` (Wayland), `xclip` (X11)
or `osascript` (macOS). That works where ohtui runs on the machine with the clipboard, not
over SSH. The image is written to a file in a folder of this process's own and attached
like any other image file.

Blocking (subprocesses): call it on a thread worker.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ohtui.image_file import MAX_IMAGE_BYTES, human_size, sniff

TIMEOUT = 5.0
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
SUFFIXES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
NO_TOOL = (
    "ohtui reads images on the clipboard with wl-paste (Wayland: the wl-clipboard package) "
    "or xclip (X11); neither was found. Save the image to a file and paste its path instead."
)
NO_DISPLAY = (
    "There is no clipboard here to read an image from (no display: over SSH?). Save the "
    "image to a file on this machine and paste its path, or @mention it."
)
NO_IMAGE = "There is no image on the clipboard."


@dataclass(frozen=True)
class ClipboardImage:
    """What reading the clipboard gave: the file the image was written to, or why none."""

    path: Path | None = None
    problem: str | None = None


def read_clipboard_image(
    folder: Path, number: int, environ: Mapping[str, str] | None = None
) -> ClipboardImage:
    """Write the clipboard's image to `folder` as `clipboard-<number>.<ext>`."""
    env = os.environ if environ is None else environ
    try:
        raw = _clipboard_bytes(env)
    except (OSError, subprocess.SubprocessError) as exc:
        return ClipboardImage(problem=f"The clipboard could not be read: {exc}")
    if isinstance(raw, str):
        return ClipboardImage(problem=raw)
    mime = sniff(raw[:12])
    if mime is None:
        return ClipboardImage(problem=NO_IMAGE)
    if len(raw) > MAX_IMAGE_BYTES:
        return ClipboardImage(
            problem=f"The image on the clipboard is {human_size(len(raw))}: images up to "
            f"{human_size(MAX_IMAGE_BYTES)} can be sent. Crop or shrink it first."
        )
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"clipboard-{number}.{SUFFIXES[mime]}"
    path.write_bytes(raw)
    return ClipboardImage(path=path)


def _clipboard_bytes(env: Mapping[str, str]) -> bytes | str:
    """The clipboard's image bytes (b"" when it holds none), or why it cannot be read."""
    if sys.platform == "darwin":
        return _macos(env)
    wayland = env.get("WAYLAND_DISPLAY") and shutil.which("wl-paste", path=env.get("PATH"))
    if wayland:
        types = _types([wayland, "--list-types"], env)
        chosen = next((kind for kind in IMAGE_TYPES if kind in types), None)
        return _run([wayland, "--no-newline", "--type", chosen], env) if chosen else b""
    xclip = env.get("DISPLAY") and shutil.which("xclip", path=env.get("PATH"))
    if xclip:
        base = [xclip, "-selection", "clipboard"]
        types = _types([*base, "-t", "TARGETS", "-o"], env)
        chosen = next((kind for kind in IMAGE_TYPES if kind in types), None)
        return _run([*base, "-t", chosen, "-o"], env) if chosen else b""
    if not env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY"):
        return NO_DISPLAY
    return NO_TOOL


_MAC_DATA = re.compile(rb"\xc2\xabdata PNGf([0-9A-Fa-f]+)\xc2\xbb")


def _macos(env: Mapping[str, str]) -> bytes:
    # AppleScript prints the clipboard's PNG as «data PNGf89504E47…» (hex), or fails when
    # the clipboard holds no image.
    try:
        out = _run(["osascript", "-e", "the clipboard as «class PNGf»"], env)
    except subprocess.CalledProcessError:
        return b""
    match = _MAC_DATA.search(out)
    return bytes.fromhex(match.group(1).decode()) if match else b""


def _types(command: list[str], env: Mapping[str, str]) -> list[str]:
    """The MIME types the clipboard offers (none when the tool says it is empty)."""
    try:
        return _run(command, env).decode(errors="replace").split()
    except subprocess.CalledProcessError:
        return []


def _run(command: list[str], env: Mapping[str, str]) -> bytes:
    done = subprocess.run(
        command,
        capture_output=True,
        timeout=TIMEOUT,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        check=True,
    )
    return done.stdout
