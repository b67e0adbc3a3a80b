"""Reading an image from the system clipboard with the desktop's own tool (xclip here)."""

from __future__ import annotations

from pathlib import Path

from ohtui.tui.widgets.clipboard_image import NO_DISPLAY, NO_IMAGE, NO_TOOL, read_clipboard_image

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 30

FAKE_XCLIP = """#!/bin/sh
# xclip -selection clipboard -t TARGETS|image/jpeg -o
case "$4" in
  TARGETS) printf 'TARGETS\\n{types}\\n' ;;
  image/jpeg) cat '{image}' ;;
  *) exit 1 ;;
esac
"""


def xclip(tmp_path: Path, types: str) -> dict[str, str]:
    source = tmp_path / "held.jpg"
    source.write_bytes(JPEG)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "xclip"
    script.write_text(FAKE_XCLIP.format(types=types, image=source))
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "DISPLAY": ":0"}


def test_an_x11_clipboard_image_is_written_to_a_file(tmp_path: Path) -> None:
    environ = xclip(tmp_path, "image/jpeg\nUTF8_STRING")
    result = read_clipboard_image(tmp_path / "out", 3, environ)
    assert result.problem is None and result.path == tmp_path / "out" / "clipboard-3.jpg"
    assert result.path.read_bytes() == JPEG


def test_text_only_no_tool_and_no_display_each_say_so(tmp_path: Path) -> None:
    environ = xclip(tmp_path, "UTF8_STRING")
    assert read_clipboard_image(tmp_path / "out", 1, environ).problem == NO_IMAGE
    no_tool = {"PATH": str(tmp_path / "empty"), "DISPLAY": ":0"}
    assert read_clipboard_image(tmp_path / "out", 1, no_tool).problem == NO_TOOL
    assert read_clipboard_image(tmp_path / "out", 1, {"PATH": "/usr/bin"}).problem == NO_DISPLAY
    assert not (tmp_path / "out").exists()
