"""SVG snapshots of transcript search: the find bar with its count and a hit unfolded and
marked, and the bar saying there is no match on a small terminal."""

from __future__ import annotations

from typing import Any

from chat_helpers import chat_ready
from test_snapshots import settle
from test_transcript_find import FOLDED, bar, count, resumed, save_conversation

from ohtui.tui.options import AppOptions


async def _search(pilot: Any, wait: Any, term: str, counted: str) -> None:
    app = pilot.app
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    await pilot.press("ctrl+f")
    await wait(pilot, lambda: bar(app).input.has_focus, timeout=5, what="the find bar")
    bar(app).input.value = term
    await wait(pilot, lambda: count(app).startswith(counted), timeout=10, what=counted)
    await pilot.pause(0.3)  # the hit's cell unfolds and the view scrolls to it
    await settle(pilot)


def test_a_hit_unfolded_and_marked(snap_compare: Any, app_options: AppOptions, wait: Any) -> None:
    """The hit's output unfolded, its line in the middle, the term marked; the bar counts."""
    app = resumed(app_options, save_conversation(app_options, turns=3, output=FOLDED))

    async def run_before(pilot: Any) -> None:
        await _search(pilot, wait, "needle", "3 of 3")
        await pilot.press("shift+enter")
        await wait(pilot, lambda: count(pilot.app) == "2 of 3", timeout=5, what="2 of 3")
        await pilot.pause(0.3)
        await settle(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_no_match_on_a_small_terminal(
    snap_compare: Any, app_options: AppOptions, wait: Any
) -> None:
    """80x24: the bar's short hint, and "No matches"."""
    app = resumed(app_options, save_conversation(app_options, turns=2))

    async def run_before(pilot: Any) -> None:
        await _search(pilot, wait, "zebra", "No matches")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
