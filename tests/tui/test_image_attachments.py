"""Images attached to a message: by a pasted path (as terminals paste a dragged file), by an
`@` mention or completion; sent as image parts to a model that reads images, refused (and
kept) for one that does not; named in the transcript, now and when resumed."""

from __future__ import annotations

import base64
import os
import struct
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    cells,
    chat_ready,
    run_over,
    screen_text,
    status,
    user_texts,
)
from llm_server import ScriptedLLMServer
from textual import events

from ohtui.sdk import ImageContent, MessageEvent
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.attached import pasted_paths, shown_text
from ohtui.tui.widgets.cells import UserCell
from ohtui.tui.widgets.composer import IMAGE_HINT, Composer, ComposerInput

pytestmark = pytest.mark.anyio
VISION_MODEL = "openai/gpt-4o"
"""A model litellm's map says reads images (the scripted server answers for it)."""


def png(width: int = 2, height: int = 2) -> bytes:
    """A real PNG image: grey pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def image_parts(request: dict[str, Any]) -> list[str]:
    """The image URLs of the user messages in one chat-completions request body."""
    urls = []
    for message in request["messages"]:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            urls += [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]
    return urls


async def paste(pilot: Any, text: str) -> None:
    assert isinstance(pilot.app.focused, ComposerInput)
    pilot.app.post_message(events.Paste(text))  # as the terminal driver does
    await pilot.pause()


def notifications(app: OhtuiApp) -> str:
    return " ".join(str(n.message) for n in app._notifications)


# --- what a paste names -----------------------------------------------------------------------


def test_pasted_paths_in_the_forms_terminals_paste_them(tmp_path: Path) -> None:
    spaced = tmp_path / "My Shot.png"
    spaced.write_bytes(png())
    other = tmp_path / "b.jpg"
    other.write_bytes(b"\xff\xd8\xff")
    (tmp_path / "notes.txt").write_text("x")
    assert pasted_paths(str(spaced), None) == [spaced]  # bare (kitty, foot)
    assert pasted_paths(f"'{spaced}' ", None) == [spaced]  # quoted (GNOME Terminal)
    assert pasted_paths(f'"{spaced}"', None) == [spaced]  # double quotes (Windows Terminal)
    escaped = str(spaced).replace(" ", "\\ ")
    assert pasted_paths(escaped, None) == [spaced]  # escaped (macOS Terminal, iTerm2)
    url = "file://" + str(spaced).replace(" ", "%20")
    assert pasted_paths(url, None) == [spaced]  # a file URL (file managers' copy)
    assert pasted_paths(f"{escaped} {other}", None) == [spaced, other]  # two files dragged
    assert pasted_paths("b.jpg", tmp_path) == [other]  # relative to the workspace
    for text in (
        f"{tmp_path}/notes.txt",  # not an image's name
        f"{tmp_path}/gone.png",  # no such file
        f"look at {other}",  # words around the path
        f"{other}\n{other}",  # lines of text
        "file://otherhost/x.png",
        "'unbalanced",
        "b.jpg",  # relative, with no workspace
    ):
        assert pasted_paths(text, None if text == "b.jpg" else tmp_path) is None, text


def test_images_without_a_chip_are_shown_as_placeholders() -> None:
    assert shown_text("see [image: a.png 1 KB]", 1) == "see [image: a.png 1 KB]"
    assert shown_text("what is this?", 1) == "what is this?\n[image]"
    assert shown_text("", 2) == "[2 images]"


# --- the app ----------------------------------------------------------------------------------


async def test_a_pasted_image_path_is_sent_as_an_image_and_named_in_the_transcript(
    app_options: AppOptions, llm_server: ScriptedLLMServer, project: Path, wait: Any
) -> None:
    shot = project / "shot.png"
    shot.write_bytes(png())
    llm_server.reply_text("A grey square.", usage=USAGE)
    app = OhtuiApp(replace(app_options, model=VISION_MODEL))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await pilot.press(*"What", "space", *"is", "space", *"this?", "space")
        await paste(pilot, f"'{shot}'")  # dragged from a file manager
        composer = app.screen.query_one(Composer)
        assert composer.text == "What is this? [image: shot.png 71 B] "
        await pilot.pause(0.1)
        assert IMAGE_HINT.split(" · ")[0] in screen_text(app)

        await pilot.press("enter")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        expected = f"data:image/png;base64,{base64.b64encode(shot.read_bytes()).decode()}"
        assert image_parts(llm_server.requests[0]) == [expected]
        user = [m for m in llm_server.requests[0]["messages"] if m["role"] == "user"][-1]
        assert user["content"][0] == {
            "type": "text",
            "text": "What is this? [image: shot.png 71 B]",
        }
        await wait(pilot, lambda: run_over(app), what="the run to end")
        assert user_texts(app)[-1] == "What is this? [image: shot.png 71 B]"
        assert composer.text == ""
        conversation = app.chat.session.conversation if app.chat else None
        assert conversation is not None
        saved = [
            e
            for e in conversation.state.events
            if isinstance(e, MessageEvent) and e.source == "user"
        ][-1]
        assert [p.image_urls for p in saved.llm_message.content if isinstance(p, ImageContent)] == [
            [expected]
        ]

    # Resumed, the transcript names the image, and the model gets it again with the history.
    llm_server.reply_text("Still grey.", usage=USAGE)
    app = OhtuiApp(replace(app_options, model=VISION_MODEL, resume_id=app_options.conversation_id))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open again")
        await wait(pilot, lambda: bool(cells(app, UserCell)), what="the history")
        assert user_texts(app) == ["What is this? [image: shot.png 71 B]"]
        await pilot.press(*"and", "space", *"now?", "enter")
        await wait(pilot, lambda: len(llm_server.requests) == 2, what="the second call")
        assert image_parts(llm_server.requests[1]) == [expected]


async def test_at_completion_and_a_typed_mention_attach_images(
    app_options: AppOptions, llm_server: ScriptedLLMServer, project: Path, wait: Any
) -> None:
    (project / "assets").mkdir()
    (project / "assets" / "logo.png").write_bytes(png())
    (project / "diagram.gif").write_bytes(b"GIF89a" + b"\x00" * 20)
    (project / "readme.md").write_text("# hi")
    llm_server.reply_text("Two images.", usage=USAGE)
    app = OhtuiApp(replace(app_options, model=VISION_MODEL))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        composer = app.screen.query_one(Composer)
        await pilot.press("@", *"logo")
        await wait(pilot, lambda: composer.completion_open, what="the @ menu", timeout=5)
        await pilot.press("tab")
        assert composer.text == "[image: logo.png 71 B] "
        await pilot.press(*"and", "space", "@", *"diagram.gif", "space", *"and", "space")
        await pilot.press("@", *"readme.md")  # not an image: stays a mention
        await pilot.press("escape")  # close the menu
        await pilot.press("enter")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        parts = image_parts(llm_server.requests[0])
        assert [url.split(",")[0] for url in parts] == [
            "data:image/png;base64",
            "data:image/gif;base64",
        ]
        await wait(pilot, lambda: run_over(app), what="the run to end")
        assert user_texts(app)[-1] == (
            "[image: logo.png 71 B] and [image: diagram.gif 26 B] and @readme.md"
        )


async def test_a_model_that_reads_no_images_gets_nothing_and_the_draft_stays(
    app_options: AppOptions, llm_server: ScriptedLLMServer, project: Path, wait: Any
) -> None:
    shot = project / "shot.png"
    shot.write_bytes(png())
    llm_server.reply_text("Text only.", usage=USAGE)
    app = OhtuiApp(app_options)  # openai/test-model: unknown to the map, so no vision
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await pilot.press(*"look", "space")
        await paste(pilot, str(shot))
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert llm_server.requests == []  # nothing sent
        said = notifications(app)
        assert "openai/test-model does not accept images, so the message was not sent" in said
        composer = app.screen.query_one(Composer)
        assert composer.text == "look [image: shot.png 71 B]"
        assert user_texts(app) == []

        await pilot.press("end", "backspace")  # the whole chip at once
        assert composer.text == "look "
        await pilot.press("enter")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        assert image_parts(llm_server.requests[0]) == []
        assert llm_server.requests[0]["messages"][-1]["content"] == "look"


async def test_a_paste_of_a_file_that_is_not_an_image_goes_in_as_text_and_says_why(
    app_options: AppOptions, llm_server: ScriptedLLMServer, project: Path, wait: Any
) -> None:
    fake = project / "fake.png"
    fake.write_text("not really", encoding="utf-8")
    huge = project / "huge.jpg"
    with huge.open("wb") as stream:
        stream.write(b"\xff\xd8\xff")
        stream.truncate(5 * 1024 * 1024)
    app = OhtuiApp(replace(app_options, model=VISION_MODEL))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        composer = app.screen.query_one(Composer)
        await paste(pilot, str(fake))
        assert composer.text == str(fake)
        assert "fake.png is not an image ohtui can send" in notifications(app)
        composer.text = ""
        await paste(pilot, str(huge))
        assert composer.text == str(huge)
        assert "huge.jpg is 5 MB: images up to 3.75 MB can be sent" in notifications(app)
        gone = project / "gone.png"
        gone.write_bytes(png())
        composer.text = ""
        await paste(pilot, str(gone))
        gone.unlink()  # after it was attached, before it was sent
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert f"{gone} does not exist." in notifications(app)
        assert composer.text == "[image: gone.png 71 B]" and llm_server.requests == []
        composer.text = "see @huge.jpg"  # typed: the message is not sent
        await pilot.press("escape", "enter")  # the @ menu closed, then Enter
        await pilot.pause(0.1)
        assert composer.text == "see @huge.jpg" and llm_server.requests == []


async def test_an_image_reaches_the_message_on_an_agent_server(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    project: Path,
    tmp_path: Path,
    wait: Any,
) -> None:
    from server.server_process import TEST_KEY, ServerProcess

    shot = project / "shot.png"
    shot.write_bytes(png())
    llm_server.reply_text("A grey square, seen on the server.", usage=USAGE)
    data = tmp_path / "serve-data"
    data.mkdir()
    serve = ServerProcess(data).start()
    try:
        options = replace(
            app_options,
            model=VISION_MODEL,
            server=serve.url,
            environ={"OHTUI_SERVER_API_KEY": TEST_KEY},
            conversation_id=None,
        )
        app = OhtuiApp(options)
        async with app.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
            await paste(pilot, f"file://{shot}")
            await pilot.press("enter")
            await wait(pilot, lambda: len(llm_server.requests) == 1, what="the server's call")
            expected = f"data:image/png;base64,{base64.b64encode(shot.read_bytes()).decode()}"
            assert image_parts(llm_server.requests[0]) == [expected]
            await wait(pilot, lambda: run_over(app), what="the run to end")
            assert user_texts(app) == ["[image: shot.png 71 B]"]
            assert app.chat is not None
            conversation_id = app.chat.session.conversation_id
        with serve.client() as client:
            listed = client.get(f"/api/conversations/{conversation_id}/events/search").json()
        users = [e for e in listed["items"] if e.get("source") == "user"]
        content = users[-1]["llm_message"]["content"]
        assert [part.get("image_urls") for part in content if part["type"] == "image"] == [
            [expected]
        ]
    finally:
        serve.stop()


def test_snapshot_the_composer_with_an_attached_image(
    snap_compare: Any, app_options: AppOptions, project: Path, wait: Any
) -> None:
    shot = project / "Screen Shot.png"
    shot.write_bytes(png())

    async def attach(pilot: Any) -> None:
        # Idle, as the empty chat's snapshot waits: the status bar has its sandbox badge.
        await wait(pilot, lambda: status(pilot.app) == "idle", what="the conversation to open")
        await pilot.press(*"Why", "space", *"is", "space", *"this", "space", *"red?", "space")
        await paste(pilot, str(shot).replace(" ", "\\ "))  # dragged into iTerm2
        pilot.app.clear_notifications()
        for widget in pilot.app.screen.query("TextArea"):
            widget.cursor_blink = False
        await pilot.pause(0.1)
        await pilot.wait_for_scheduled_animations()

    app = OhtuiApp(replace(app_options, model=VISION_MODEL))
    assert snap_compare(app, terminal_size=SIZE, run_before=attach)


FAKE_WL_PASTE = """#!/bin/sh
# wl-paste as the clipboard of a desktop holding {what}
case "$1" in
  --list-types) printf '{types}\\n' ;;
  --no-newline) cat '{image}' ;;
esac
"""


def fake_clipboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, image: bytes | None) -> None:
    """A Wayland desktop whose clipboard holds `image` (None: only text)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    source = tmp_path / "clipboard.bin"
    source.write_bytes(image or b"")
    script = bin_dir / "wl-paste"
    types = "image/png\\ntext/html" if image is not None else "text/plain"
    script.write_text(FAKE_WL_PASTE.format(what="it", types=types, image=source))
    script.chmod(0o755)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


async def test_ctrl_v_attaches_the_image_on_the_system_clipboard(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    wait: Any,
) -> None:
    fake_clipboard(tmp_path, monkeypatch, png())
    llm_server.reply_text("A screenshot.", usage=USAGE)
    app = OhtuiApp(replace(app_options, model=VISION_MODEL))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        composer = app.screen.query_one(Composer)
        await pilot.press(*"see", "space", "ctrl+v")
        await wait(pilot, lambda: "[image:" in composer.text, what="the chip", timeout=5)
        assert composer.text == "see [image: clipboard-1.png 71 B] "
        await pilot.press("enter")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        expected = f"data:image/png;base64,{base64.b64encode(png()).decode()}"
        assert image_parts(llm_server.requests[0]) == [expected]


async def test_ctrl_v_without_an_image_pastes_text_or_says_why(
    app_options: AppOptions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wait: Any
) -> None:
    fake_clipboard(tmp_path, monkeypatch, None)
    app = OhtuiApp(replace(app_options, model=VISION_MODEL))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        composer = app.screen.query_one(Composer)
        await pilot.press("ctrl+v")
        await wait(pilot, lambda: bool(notifications(app)), what="the notice", timeout=5)
        assert "There is no image on the clipboard." in notifications(app)
        app.copy_to_clipboard("copied in ohtui")
        await pilot.press("ctrl+v")
        await wait(pilot, lambda: composer.text == "copied in ohtui", what="the text", timeout=5)


async def test_help_tells_how_to_attach_an_image(app_options: AppOptions, wait: Any) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert app.chat is not None
        app.chat.run_slash("help")
        await wait(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="the help")
        shown = screen_text(app)
        assert "@pic.png, a path, Ctrl+V  attach an image: a file, or the clipboard's" in shown
