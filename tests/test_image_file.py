"""Image files to attach: known by their bytes, bounded in size, read as data URLs."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from ohtui.image_file import (
    MAX_IMAGE_BYTES,
    ImageFileError,
    check_image,
    data_url,
    human_size,
    looks_like_image,
    sniff,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 40
GIF = b"GIF89a" + b"\x00" * 40
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 40


@pytest.mark.parametrize(
    ("head", "mime"),
    [(PNG, "image/png"), (JPEG, "image/jpeg"), (GIF, "image/gif"), (WEBP, "image/webp")],
)
def test_images_are_known_by_their_bytes(tmp_path: Path, head: bytes, mime: str) -> None:
    assert sniff(head) == mime
    path = tmp_path / "picture.bin"  # the name does not decide
    path.write_bytes(head)
    assert check_image(path).mime == mime
    assert data_url(path) == f"data:{mime};base64,{base64.b64encode(head).decode()}"


def test_a_file_named_like_an_image_that_is_not_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.png"
    path.write_text("just text", encoding="utf-8")
    with pytest.raises(ImageFileError, match=r"notes\.png is not an image .*PNG, JPEG, GIF"):
        check_image(path)
    with pytest.raises(ImageFileError, match="not an image"):
        data_url(path)


def test_a_too_large_image_is_refused_with_its_size_and_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "huge.png"
    with path.open("wb") as stream:
        stream.write(PNG)
        stream.truncate(5 * 1024 * 1024)
    with pytest.raises(ImageFileError, match=r"huge\.png is 5 MB: images up to 3\.75 MB"):
        check_image(path)
    path.write_bytes(PNG + b"\x00" * (MAX_IMAGE_BYTES + 1 - len(PNG)))  # one byte over
    with pytest.raises(ImageFileError, match="Shrink or crop it"):
        data_url(path)
    path.write_bytes(PNG + b"\x00" * (MAX_IMAGE_BYTES - len(PNG)))  # at the limit: taken
    assert len(data_url(path)) > MAX_IMAGE_BYTES


def test_missing_files_folders_and_fifos_are_refused_without_blocking(tmp_path: Path) -> None:
    with pytest.raises(ImageFileError, match="does not exist"):
        check_image(tmp_path / "gone.png")
    with pytest.raises(ImageFileError, match="folder"):
        check_image(tmp_path)
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    with pytest.raises(ImageFileError, match="not a regular file"):
        check_image(fifo)  # would block forever if opened for a plain read


def test_names_and_sizes() -> None:
    assert looks_like_image("a/b/Shot.PNG") and looks_like_image("x.jpeg")
    assert looks_like_image("x.webp") and looks_like_image("x.gif") and looks_like_image("x.jpg")
    assert not looks_like_image("x.svg") and not looks_like_image("png")
    assert [human_size(n) for n in (812, 34 * 1024, 2_200_000)] == ["812 B", "34 KB", "2.1 MB"]


# Tries written after the loader, of the classes it was built against (special files, links,
# sizes, contents), none of which it was designed around: each is refused with a message
# naming the file, at once, and nothing of what was read shows in the message.


def test_links_to_devices_and_loops_are_refused_at_once(tmp_path: Path) -> None:
    for device in ("/dev/zero", "/dev/urandom", "/dev/null"):
        link = tmp_path / f"{Path(device).name}.png"
        link.symlink_to(device)
        with pytest.raises(ImageFileError, match="not a regular file"):
            data_url(link)  # /dev/zero would fill memory; /dev/urandom never ends
    (tmp_path / "a.png").symlink_to(tmp_path / "b.png")
    (tmp_path / "b.png").symlink_to(tmp_path / "a.png")
    with pytest.raises(ImageFileError, match="cannot be read"):
        check_image(tmp_path / "a.png")
    (tmp_path / "dangling.png").symlink_to(tmp_path / "nowhere.png")
    with pytest.raises(ImageFileError, match="does not exist"):
        check_image(tmp_path / "dangling.png")


def test_a_socket_named_like_an_image_is_refused(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s.png"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(ImageFileError, match=r"cannot be read|not a regular file"):
            check_image(path)


def test_empty_and_truncated_headers_are_not_images(tmp_path: Path) -> None:
    for name, content in (("empty.png", b""), ("short.png", PNG[:7]), ("riff.webp", b"RIFF")):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ImageFileError, match="not an image"):
            data_url(path)


def test_a_file_grown_after_it_was_attached_is_judged_as_it_is_now(tmp_path: Path) -> None:
    path = tmp_path / "grows.png"
    path.write_bytes(PNG)
    assert check_image(path).size == len(PNG)
    with path.open("r+b") as stream:
        stream.truncate(50 * MAX_IMAGE_BYTES)  # sparse: huge, yet cheap to make
    with pytest.raises(ImageFileError, match="Shrink or crop it"):
        data_url(path)  # reads no more than the limit and one byte


def test_a_link_to_a_secret_file_is_refused_without_showing_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "env"
    secret.write_text("OPENAI_API_KEY=sk-live-should-not-show\n")
    link = tmp_path / "innocent.png"
    link.symlink_to(secret)
    with pytest.raises(ImageFileError) as refused:
        data_url(link)
    assert "sk-live" not in str(refused.value) and "innocent.png" in str(refused.value)
    environ = tmp_path / "environ.png"
    environ.symlink_to("/proc/self/environ")
    monkeypatch.setenv("OHTUI_TRY_SECRET", "sk-proc-should-not-show")
    with pytest.raises(ImageFileError) as refused:
        data_url(environ)
    assert "sk-proc" not in str(refused.value)
