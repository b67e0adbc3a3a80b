"""Streaming into a cell: drawn at once, laid out again only when its height changes."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen

from ohtui.tui.widgets.cells import (
    STREAM_REFRESH_SECONDS,
    AgentCell,
    StreamingCell,
    StreamPart,
    UserCell,
)
from ohtui.tui.widgets.conversation_view import ConversationView

pytestmark = pytest.mark.anyio


class StreamApp(App[None]):
    """A conversation of 100 cells, and a response streaming in below them."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="conversation"):
            for n in range(100):
                yield UserCell(f"message {n}")
            yield StreamingCell("r1")


async def test_streaming_lays_the_screen_out_only_when_the_text_grows_a_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    layouts = 0
    original = Screen._refresh_layout

    def counting(self: Screen[Any], *args: Any, **kwargs: Any) -> None:
        nonlocal layouts
        layouts += 1
        original(self, *args, **kwargs)

    app = StreamApp()
    async with app.run_test(size=(80, 24)) as pilot:
        cell = app.query_one(StreamingCell)
        cell.append("w0 ")
        await pilot.pause(0.1)
        monkeypatch.setattr(Screen, "_refresh_layout", counting)
        chunks = [f"w{n} " for n in range(1, 31)]  # 30 short words: two lines at 80 columns
        for chunk in chunks:
            cell.append(chunk)
            await pilot.pause(STREAM_REFRESH_SECONDS * 1.5)
        await pilot.pause(0.1)
        assert cell.text == "w0 " + "".join(chunks)
        assert "w30" in str(cell.render())
        assert layouts <= 3  # one per new line, not one per redraw (30 before)


async def test_streamed_text_is_kept_in_chunks_and_joined_once_per_redraw() -> None:
    app = StreamApp()
    async with app.run_test(size=(80, 24)) as pilot:
        cell = app.query_one(StreamingCell)
        await pilot.pause()
        for n in range(1000):
            cell.append(f"w{n} ", "")
        assert len(cell._growing) == 1000  # appending never copies the text so far
        await pilot.pause(STREAM_REFRESH_SECONDS * 2)
        assert len(cell._growing) == 1  # joined once, by the redraw
        assert cell.text == "".join(f"w{n} " for n in range(1000))
        cell.append("para one.\n\npara two")
        await pilot.pause(STREAM_REFRESH_SECONDS * 2)
        assert len(cell.parts) == 1  # the finished paragraph is drawn once, apart
        view = app.query_one("#conversation")
        assert view.children[-2:] == [cell.parts[0], cell]  # just above the growing one
        assert "para one." in str(cell.parts[0].render())
        assert "para one." not in str(cell.render())
        assert cell.text.endswith("para one.\n\npara two")


class ViewApp(App[None]):
    """An empty conversation view, as the chat screen has it."""

    CSS_PATH = "../../ohtui/tui/ohtui.tcss"

    def compose(self) -> ComposeResult:
        yield ConversationView(id="conversation")


async def test_a_finished_response_replaces_its_growing_paragraph_and_its_parts() -> None:
    app = ViewApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ConversationView)
        view.add_tokens("r1", "", "pondering the parser")
        view.add_tokens("r1", "para one.\n\npara two.\n\n", "")
        await pilot.pause(STREAM_REFRESH_SECONDS * 2)
        view.add_tokens("r1", "para three", "")
        await pilot.pause(STREAM_REFRESH_SECONDS * 2)
        cell = view.query_one(StreamingCell)
        shown = [str(part.render()) for part in view.query(StreamPart)]
        assert shown == ["thinking: pondering the parser", "para one.\n\npara two.\n\n"]
        assert cell.parts[0].has_class("-first") and not cell.parts[1].has_class("-first")
        assert cell.has_class("-continued")  # one block: no gap between the parts and the tail
        assert cell.text == "para one.\n\npara two.\n\npara three"
        final = AgentCell(cell.text)
        assert view.replace_stream("r1", final)
        await pilot.pause()
        assert not view.query(StreamPart) and not view.query(StreamingCell)
        assert view.query_one(AgentCell) is final


async def test_a_reasoning_line_longer_than_the_screen_wraps_instead_of_being_cut() -> None:
    app = ViewApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ConversationView)
        view.add_tokens("r1", "", "short")
        await pilot.pause(STREAM_REFRESH_SECONDS * 2)
        thought = view.query_one(StreamPart)
        assert thought.outer_size.height == 1
        view.add_tokens("r1", "", " and now a thought far longer than one row of the screen " * 3)
        await pilot.pause(STREAM_REFRESH_SECONDS * 2)
        assert thought.outer_size.height == 3  # 180 characters over 76 columns
