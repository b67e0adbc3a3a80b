"""Streaming into a cell: chunks kept and joined once per redraw, finished paragraphs drawn
once, blank rows held under the text so the view is laid out and scrolls once a step."""

from __future__ import annotations

import re
from typing import Any

import pyte
import pytest
from chat_helpers import screen_text
from rich.console import RenderableType
from textual._compositor import CompositorUpdate
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen

from ohtui.tui.widgets.cells import (
    STREAM_RESERVE_FRACTION,
    AgentCell,
    StreamingCell,
    UserCell,
)
from ohtui.tui.widgets.conversation_view import ConversationView

pytestmark = pytest.mark.anyio
REDRAW = 0.05
"""Long enough for a pending redraw to happen."""
CHUNK_GAP = 0.01
"""Between streamed chunks: a fast model's pace."""


class StreamApp(App[None]):
    """A conversation of 100 cells, and a response streaming in below them."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="conversation"):
            for n in range(100):
                yield UserCell(f"message {n}")
            yield StreamingCell("r1")


class ViewApp(App[None]):
    """A conversation view, as the chat screen has it, with `cells` user cells in it."""

    CSS_PATH = "../../ohtui/tui/app/ohtui.tcss"
    AUTO_FOCUS = None  # as in the chat screen, where the composer has the focus

    def __init__(self, cells: int = 0) -> None:
        super().__init__()
        self.cells = cells

    def compose(self) -> ComposeResult:
        yield ConversationView(id="conversation")

    def on_mount(self) -> None:
        view = self.query_one(ConversationView)
        for n in range(self.cells):
            view.mount(UserCell(f"message {n}"))


class TerminalApp(ViewApp):
    """A ViewApp whose every update goes to an emulated terminal, as it would to a real one
    (only what the compositor repaints reaches it)."""

    def __init__(self, cells: int, size: tuple[int, int]) -> None:
        super().__init__(cells)
        self.terminal = pyte.Screen(*size)
        self._stream = pyte.Stream(self.terminal)

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        if isinstance(renderable, CompositorUpdate):
            self._stream.feed(renderable.render_segments(self.console))


class Chunk(str):
    """A streamed chunk that fails the test if the text so far is copied to append it."""

    def __radd__(self, other: str) -> str:
        raise AssertionError("`text += chunk` copies the whole text for every chunk")


def count_layouts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, count the screen's layouts (in the one-item list returned)."""
    layouts = [0]
    original = Screen._refresh_layout

    def counting(self: Screen[Any], *args: Any, **kwargs: Any) -> None:
        layouts[0] += 1
        original(self, *args, **kwargs)

    monkeypatch.setattr(Screen, "_refresh_layout", counting)
    return layouts


def text_rows(cell: StreamingCell) -> int:
    """The rows the cell's text takes (without the blank rows held under it)."""
    return cell.render().get_height(cell.styles, cell.content_size.width)


async def test_streaming_lays_the_screen_out_only_when_the_reserve_is_used_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = StreamApp()
    async with app.run_test(size=(80, 24)) as pilot:
        cell = app.query_one(StreamingCell)
        cell.append("w000 ")
        await pilot.pause(0.1)
        step = int(24 * STREAM_RESERVE_FRACTION)
        assert cell.reserve == step and cell.size.height == step
        layouts = count_layouts(monkeypatch)
        chunks = [f"w{n:03d} " for n in range(1, 150)]  # 150 words of 5 columns: 10 lines
        for chunk in chunks:
            cell.append(chunk)
            await pilot.pause(CHUNK_GAP)
        await pilot.pause(0.1)
        assert cell.text == "w000 " + "".join(chunks)
        assert text_rows(cell) == 10
        assert cell.reserve == 2 * step and cell.size.height == 2 * step
        assert layouts[0] <= 2  # once when the first step was used up (it was 9 before: a line)


async def test_streamed_text_is_kept_in_chunks_and_joined_once_per_redraw() -> None:
    app = StreamApp()
    async with app.run_test(size=(80, 24)) as pilot:
        cell = app.query_one(StreamingCell)
        await pilot.pause()
        for n in range(1000):
            cell.append(Chunk(f"w{n} "), "")
        assert len(cell._growing) == 1000  # appending never copies the text so far
        await pilot.pause(REDRAW)
        assert len(cell._growing) == 1  # joined once, by the redraw
        assert cell.text == "".join(f"w{n} " for n in range(1000))
        cell.append(Chunk("para one.\n\npara two"))
        await pilot.pause(REDRAW)
        assert cell._growing == ["para two"]  # the finished paragraph is never joined again
        assert cell.text.endswith("para one.\n\npara two")


async def test_finished_paragraphs_are_drawn_once_however_long_the_response() -> None:
    app = ViewApp(cells=30)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ConversationView)
        for n in range(40):
            view.add_tokens("r1", Chunk(f"paragraph {n} starts"), "")
            await pilot.pause(REDRAW)
            view.add_tokens("r1", Chunk(" and ends.\n\n"), "")
            await pilot.pause(REDRAW)
        cell = view.query_one(StreamingCell)
        assert len(cell.blocks.blocks) == 40
        assert cell.blocks.draws == 40  # each paragraph drawn once, not once per redraw
        assert cell._growing == []
        assert cell.text == "".join(f"paragraph {n} starts and ends.\n\n" for n in range(40))
        shown = screen_text(app)  # type: ignore[arg-type]
        assert "paragraph 38 starts and ends.\n\n  paragraph 39 starts and ends." in shown


async def test_a_response_holds_blank_rows_under_its_text_until_it_is_finished() -> None:
    app = ViewApp(cells=30)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ConversationView)
        view.add_tokens("r1", "The answer", "")
        await pilot.pause(REDRAW)
        cell = view.query_one(StreamingCell)
        step = int(view.scrollable_content_region.height * STREAM_RESERVE_FRACTION)
        assert step > 1 and text_rows(cell) == 1
        assert cell.size.height == cell.reserve == step  # the text, and blank rows under it
        lines = screen_text(app).split("\n")  # type: ignore[arg-type]
        answer = next(i for i, line in enumerate(lines) if "The answer" in line)
        assert lines[answer + 1 : answer + step] == [""] * (step - 1)
        assert view.is_vertical_scroll_end  # the blank rows are in sight, at the bottom

        final = AgentCell(cell.text)
        assert view.replace_stream("r1", final)
        await pilot.pause(REDRAW)
        assert final.size.height == 1  # no reserve once the response is finished
        assert "The answer" in screen_text(app).splitlines()[-1]  # type: ignore[arg-type]


async def test_the_view_scrolls_once_a_step_not_once_a_line() -> None:
    app = ViewApp(cells=30)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ConversationView)
        positions: list[float] = []
        for n in range(300):  # 300 words of 5 columns: 20 lines
            view.add_tokens("r1", f"w{n:03d} ", "")
            await pilot.pause(CHUNK_GAP)
            if not positions or view.scroll_y != positions[-1]:
                positions.append(view.scroll_y)
        await pilot.pause(0.1)
        cell = view.query_one(StreamingCell)
        step = int(view.scrollable_content_region.height * STREAM_RESERVE_FRACTION)
        assert text_rows(cell) == 20
        assert len(positions) <= 20 // step + 2  # the first step, then one per step used up
        assert view.is_vertical_scroll_end
        assert "w299" in screen_text(app)  # type: ignore[arg-type]


async def test_a_finished_response_replaces_its_streaming_cell() -> None:
    app = ViewApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ConversationView)
        view.add_tokens("r1", "", "pondering the parser")
        view.add_tokens("r1", "para one.\n\npara two.\n\n", "")
        await pilot.pause(REDRAW)
        view.add_tokens("r1", "para three", "")
        await pilot.pause(REDRAW)
        cell = view.query_one(StreamingCell)
        shown = screen_text(app)  # type: ignore[arg-type]
        assert "thinking: pondering the parser\n  para one.\n\n  para two.\n\n  para three" in shown
        assert cell.text == "para one.\n\npara two.\n\npara three"
        final = AgentCell(cell.text)
        assert view.replace_stream("r1", final)
        await pilot.pause()
        assert not view.query(StreamingCell)
        assert view.query_one(AgentCell) is final


async def test_a_reasoning_line_longer_than_the_screen_wraps_instead_of_being_cut() -> None:
    app = ViewApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ConversationView)
        view.add_tokens("r1", "", "short")
        await pilot.pause(REDRAW)
        cell = view.query_one(StreamingCell)
        assert cell._rows_above(cell.content_size.width) == 1
        thought = " and now a thought far longer than one row of the screen" * 3
        view.add_tokens("r1", "", thought)
        view.add_tokens("r1", "The answer", "")
        await pilot.pause(REDRAW)
        assert cell._rows_above(cell.content_size.width) == 3  # 180 characters over 76 columns
        lines = screen_text(app).split("\n")  # type: ignore[arg-type]
        answer = next(i for i, line in enumerate(lines) if "The answer" in line)
        assert lines[answer - 3].strip().startswith("thinking: short and now")
        assert lines[answer - 1].strip().endswith("of the screen")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_terminal_shows_every_word_streamed_so_far_in_order(
    size: tuple[int, int],
) -> None:
    """Redraws repaint only the growing paragraph's rows: the terminal still shows it all."""
    app = TerminalApp(cells=40, size=size)
    async with app.run_test(size=size) as pilot:
        view = app.query_one(ConversationView)
        await pilot.pause(0.1)
        for n in range(300):
            view.add_tokens("r1", f"w{n:04d}" + ("\n\n" if n % 37 == 36 else " "), "")
            await pilot.pause(0.01)
            if n % 9 == 8 or n == 299:
                await pilot.pause(REDRAW)
                text = "".join(app.terminal.display)
                shown = [int(word) for word in re.findall(r"w(\d{4})", text)]
                assert shown[-1] == n  # the newest word is on the terminal
                assert shown == list(range(shown[0], n + 1))  # and every one before it


MARKDOWN_ANSWER = """Here is what I found in the **parser**:

- the first point, about `tokens()`
- the second point

```python
def tokens(text):
    return text.split()
```

> a quoted line

1. one
2. two

That is **all**."""


def answer_rows(app: App[Any], first: str) -> list[str]:
    """The screen's rows from the one showing `first` to the last one with text."""
    lines = screen_text(app).split("\n")  # type: ignore[arg-type]
    top = next(i for i, line in enumerate(lines) if first in line)
    bottom = max(i for i, line in enumerate(lines) if line.strip())
    return lines[top : bottom + 1]


async def test_a_streamed_answer_looks_as_it_will_when_finished() -> None:
    """Lists, code, quotes: the gaps between them as streamed are the finished answer's."""
    app = ViewApp()
    async with app.run_test(size=(80, 40)) as pilot:
        view = app.query_one(ConversationView)
        for word in re.split(r"(?<= )", MARKDOWN_ANSWER):
            view.add_tokens("r1", word, "")
            await pilot.pause(0.003)
        cell = view.query_one(StreamingCell)
        for _ in range(200):  # give a loaded machine time to catch up
            await pilot.pause(REDRAW)
            if len(cell.blocks.blocks) >= 5:
                break
        # The paragraph, the two lists, the code and the quote are finished; the last
        # paragraph grows.
        assert len(cell.blocks.blocks) == 5
        streamed = answer_rows(app, "Here is what I found")
        view.replace_stream("r1", AgentCell(cell.text))
        await pilot.pause(REDRAW)
        finished = answer_rows(app, "Here is what I found")
        assert streamed == finished
        assert "def tokens(text):" in "\n".join(finished)


def test_the_app_draws_up_to_120_frames_a_second_unless_the_user_says_otherwise() -> None:
    import os
    import subprocess
    import sys

    code = (
        "import os, ohtui.cli, ohtui.tui.app\n"
        "from textual import constants\n"
        "print(constants.MAX_FPS, os.environ.get('TEXTUAL_FPS'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    run = [sys.executable, "-c", code]
    ours = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert ours.stdout.split() == ["120", "None"]  # and the agent's commands do not inherit it
    env["TEXTUAL_FPS"] = "30"
    theirs = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert theirs.stdout.split() == ["30", "30"]
