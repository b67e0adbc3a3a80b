"""SVG snapshots of the restore preview and the checkpoint list, over the real chat screen,
with fixed checkpoints (their times in UTC) so that nothing in them varies between runs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from chat_helpers import chat_ready
from textual.screen import Screen

from ohtui.tui.app import OhtuiApp
from ohtui.tui.checkpoint_types import CheckpointRow, FileChange, RestorePreview
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.checkpoints import CheckpointsScreen
from ohtui.tui.screens.restore import RestoreScreen

TAKEN = "2026-03-02T14:03:27+00:00"
UNDO = CheckpointRow("a1b2c3d4e5", "rm -f src/*", files=42, taken_at=TAKEN, undo_target=True)
DIFF = """\
--- a/src/app.py
+++ b/src/app.py
@@ -0,0 +1,4 @@
+def main() -> None:
+    print("hello")
+
+main()
--- a/src/util.py
+++ b/src/util.py
@@ -0,0 +1,2 @@
+def double(x: int) -> int:
+    return 2 * x
--- a/notes.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-scratch notes
-written after the checkpoint
--- a/README.md
+++ b/README.md
@@ -1,3 +1,3 @@
 # demo
-A demo, rewritten.
+A demo.
 Run `python src/app.py`.
"""
PREVIEW = RestorePreview(
    checkpoint=UNDO,
    changes=(
        FileChange("src/app.py", "added"),
        FileChange("src/util.py", "added"),
        FileChange("notes.txt", "deleted"),
        FileChange("README.md", "modified"),
    ),
    diff=DIFF,
    undo=True,
)
ROWS = [
    CheckpointRow(
        "f0e1d2c3b4",
        "the restore to before sed -i s/foo/bar/ config.toml",
        files=41,
        taken_at="2026-03-02T14:09:51+00:00",
        before_restore=True,
    ),
    CheckpointRow("9a8b7c6d5e", "npm run build", files=41, taken_at="2026-03-02T14:06:02+00:00"),
    UNDO,
    CheckpointRow(
        "1122334455",
        "sed -i s/foo/bar/ config.toml",
        files=42,
        taken_at="2026-03-02T13:58:40+00:00",
    ),
    CheckpointRow("5566778899", "edit README.md", files=42, taken_at="2026-03-02T13:51:12+00:00"),
]


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Checkpoint times are shown in local time: make it UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def over_the_chat(screen: Screen[Any], wait: Any) -> Any:
    """A run_before that opens the chat, then pushes `screen` and lets it settle."""

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await app.push_screen(screen)
        await pilot.pause(0.1)
        app.clear_notifications()
        for widget in app.chat.query("TextArea"):
            widget.cursor_blink = False
        await pilot.pause(0.1)
        await pilot.wait_for_scheduled_animations()

    return run_before


def test_undo_preview(snap_compare: Any, app_options: AppOptions, wait: Any) -> None:
    run_before = over_the_chat(RestoreScreen(PREVIEW), wait)
    assert snap_compare(OhtuiApp(app_options), terminal_size=(120, 40), run_before=run_before)


def test_undo_preview_small(snap_compare: Any, app_options: AppOptions, wait: Any) -> None:
    """At 80x24 the diff scrolls; the title, the files' heading and the legend stay."""
    run_before = over_the_chat(RestoreScreen(PREVIEW), wait)
    assert snap_compare(OhtuiApp(app_options), terminal_size=(80, 24), run_before=run_before)


def test_checkpoint_list(snap_compare: Any, app_options: AppOptions, wait: Any) -> None:
    run_before = over_the_chat(CheckpointsScreen(ROWS), wait)
    assert snap_compare(OhtuiApp(app_options), terminal_size=(120, 40), run_before=run_before)


def test_checkpoint_list_small(snap_compare: Any, app_options: AppOptions, wait: Any) -> None:
    run_before = over_the_chat(CheckpointsScreen(ROWS), wait)
    assert snap_compare(OhtuiApp(app_options), terminal_size=(80, 24), run_before=run_before)
