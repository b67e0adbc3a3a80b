"""The diff screen on its own, fed a fixed diff: snapshots at 120x40 and 80x24, a file of
thousands of lines drawn a part at a time (and whole on End), a file whose diff was left
out, and a diff that could not be read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from chat_helpers import chat_ready
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static

from ohtui.sdk.conversation.workspace_diff import DiffSource, WorkspaceDiff
from ohtui.sdk.tools.file_editor.render import DiffLine
from ohtui.sdk.utils.unified_diff import FilePatch, split_patches
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.rewind_types import TurnRow
from ohtui.tui.screens.diff import (
    CHUNK,
    CUT,
    LEFT_OUT,
    LOADING,
    DiffScreen,
    counts,
    hunk_lines,
    totals,
)

pytestmark = pytest.mark.anyio

DIFF = """\
diff --git a/README.md b/README.md
index 1111111..2222222 100644
--- a/README.md
+++ b/README.md
@@ -1,3 +1,3 @@
 # demo
-A demo.
+A demo, rewritten.
 Run `python src/app.py`.
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..3333333
Binary files /dev/null and b/logo.png differ
diff --git a/notes.txt b/notes.txt
deleted file mode 100644
index 4444444..0000000
--- a/notes.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-scratch notes
-written before the agent came
diff --git a/src/app.py b/src/app.py
new file mode 100644
index 0000000..5555555
--- /dev/null
+++ b/src/app.py
@@ -0,0 +1,4 @@
+def main() -> None:
+    print("hello")
+
+main()
"""
TURNS = [TurnRow("e2", 2, "make it say hello"), TurnRow("e1", 1, "write a demo app")]


class FixedDiffs:
    """Answers every question with the same diff, at once."""

    def __init__(self, found: WorkspaceDiff | str) -> None:
        self.found = found
        self.asked: list[str | None] = []

    def compute(self, since: str | None, deliver: Callable[[WorkspaceDiff | str], object]) -> None:
        self.asked.append(since)
        deliver(self.found)

    def file(
        self, checkpoint_id: str, path: str, deliver: Callable[[FilePatch | str], object]
    ) -> None:
        self.asked.append(f"{checkpoint_id}:{path}")
        alone = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        deliver(split_patches(alone)[0][0] if checkpoint_id != "server" else "Not alone.")

    def turns(self, deliver: Callable[[list[TurnRow]], object]) -> None:
        deliver(TURNS)


def fixed(diff: str, note: str = "", source: DiffSource = DiffSource.CHECKPOINTS) -> FixedDiffs:
    files, cut = split_patches(diff)
    return FixedDiffs(WorkspaceDiff(source, files, note, cut))


def over_the_chat(screen: DiffScreen, wait: Any, *keys: str) -> Any:
    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await app.push_screen(screen)
        await pilot.pause(0.1)
        await pilot.press(*keys)
        await pilot.pause(0.1)
        app.clear_notifications()
        for widget in app.chat.query("TextArea"):
            widget.cursor_blink = False
        await pilot.pause(0.1)
        await pilot.wait_for_scheduled_animations()

    return run_before


def test_the_diff_screen(snap_compare: Any, app_options: AppOptions, wait: Any) -> None:
    """Four files (modified, binary, deleted, added), the first one's hunks."""
    run_before = over_the_chat(DiffScreen(fixed(DIFF)), wait)
    assert snap_compare(OhtuiApp(app_options), terminal_size=(120, 40), run_before=run_before)


def test_the_diff_screen_small(snap_compare: Any, app_options: AppOptions, wait: Any) -> None:
    """At 80x24, on the last file (n three times): the title, the files and the legend
    stay; the hunks take the rows left."""
    run_before = over_the_chat(DiffScreen(fixed(DIFF)), wait, "n", "n", "n")
    assert snap_compare(OhtuiApp(app_options), terminal_size=(80, 24), run_before=run_before)


def test_the_diff_from_git_snapshot(snap_compare: Any, app_options: AppOptions, wait: Any) -> None:
    """From git, with the note saying why and what it compares with; on the deleted file."""
    note = (
        "This conversation kept no checkpoints: shown is the workspace against its last "
        "commit (commit 0123456789ab), changes made before the conversation began included."
    )
    screen = DiffScreen(fixed(DIFF, note, DiffSource.GIT))
    run_before = over_the_chat(screen, wait, "n", "n")
    assert snap_compare(OhtuiApp(app_options), terminal_size=(120, 40), run_before=run_before)


def test_choosing_the_message_snapshot(
    snap_compare: Any, app_options: AppOptions, wait: Any
) -> None:
    run_before = over_the_chat(DiffScreen(fixed(DIFF)), wait, "m")
    assert snap_compare(OhtuiApp(app_options), terminal_size=(80, 24), run_before=run_before)


def drawn(screen: DiffScreen) -> list[str]:
    return [str(part.visual) for part in screen.query("#hunks Static").results(Static)]


async def test_a_long_file_is_drawn_a_part_at_a_time(app_options: AppOptions, wait: Any) -> None:
    lines = 5000
    body = "".join(f"+line {n}\n" for n in range(1, lines + 1))
    big = f"diff --git a/big.txt b/big.txt\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,{lines} @@\n"
    screen = DiffScreen(fixed(big + body + DIFF))
    app = OhtuiApp(app_options)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await app.push_screen(screen)
        await wait(pilot, lambda: bool(drawn(screen)), what="the first part")
        assert screen.drawn == CHUNK and "+line 5000" not in "".join(drawn(screen))
        hunks = screen.query_one("#hunks", VerticalScroll)
        for _ in range(8):  # paging down draws more before the view reaches the end
            await pilot.press("pagedown")
        await pilot.pause()
        assert CHUNK < screen.drawn < lines
        assert hunks.max_scroll_y - hunks.scroll_y > 0
        await pilot.press("end")
        await wait(
            pilot,
            lambda: screen.drawn == lines + 3 and hunks.scroll_y == hunks.max_scroll_y > 0,
            what="end",
        )
        assert screen.drawn == lines + 3  # the ---, +++ and @@ lines too
        # The end alone: the lines above it are not drawn, and it says so.
        assert drawn(screen)[0] == "… 4,603 lines above: Home shows them"
        assert drawn(screen)[-1].endswith("+line 5000") and len(drawn(screen)) == 2
        await pilot.press("home")
        await wait(
            pilot, lambda: drawn(screen)[0].startswith("--- /dev/null"), what="the top again"
        )
        assert CHUNK <= screen.drawn < lines and hunks.scroll_y == 0
        await pilot.press("n")  # the next file starts drawn afresh, at its top
        await wait(pilot, lambda: screen.current == 1, what="the next file")
        assert screen.drawn == 7 and hunks.scroll_y == 0


@pytest.mark.parametrize("checkpoint_id", [None, "c0ffee", "server"])
async def test_a_file_left_out_and_a_diff_that_cannot_be_read(
    app_options: AppOptions, wait: Any, checkpoint_id: str | None
) -> None:
    """A file left out of a cut diff is read alone from its checkpoint (not from git; a
    server's refusal is said)."""
    cut = DIFF.split("diff --git a/notes.txt", maxsplit=1)[0] + "[diff cut at 200,000 bytes: ...]\n"
    files, was_cut = split_patches(cut)
    files.append(FilePatch("notes.txt", "deleted", 0, 0, False, ""))
    source = DiffSource.CHECKPOINTS if checkpoint_id else DiffSource.GIT
    fixed = FixedDiffs(WorkspaceDiff(source, files, "", was_cut, checkpoint_id))
    screen = DiffScreen(fixed)
    failed = DiffScreen(FixedDiffs("This server keeps no checkpoints."))
    app = OhtuiApp(app_options)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await app.push_screen(screen)
        await wait(pilot, lambda: bool(drawn(screen)), what="the first file")
        assert was_cut
        await pilot.press("n", "n")
        await pilot.pause()
        if checkpoint_id is None:
            assert drawn(screen) == [LEFT_OUT]
        elif checkpoint_id == "server":
            assert drawn(screen) == ["Not alone."]
        else:
            assert fixed.asked == [None, "c0ffee:notes.txt"]
            assert drawn(screen) == ["--- a/notes.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x"]
            assert "3 files changed · +1 -2" in str(screen.query_one("#summary", Static).visual)
        await pilot.press("escape")
        await app.push_screen(failed)
        await wait(pilot, lambda: bool(drawn(failed)), what="the reason")
        assert drawn(failed) == ["This server keeps no checkpoints."]
        assert str(failed.query_one("#summary", Static).visual) == "No diff."


class LateDiffs(FixedDiffs):
    """Answers when told to (`answer`), as a slow workspace would."""

    def __init__(self, found: WorkspaceDiff | str) -> None:
        super().__init__(found)
        self.waiting: list[Callable[[WorkspaceDiff | str], object]] = []

    def compute(self, since: str | None, deliver: Callable[[WorkspaceDiff | str], object]) -> None:
        self.asked.append(since)
        self.waiting.append(deliver)

    def answer(self) -> None:
        for deliver in self.waiting:
            deliver(self.found)
        self.waiting.clear()


async def test_an_answer_that_comes_while_the_messages_show_waits_behind_them(
    app_options: AppOptions, wait: Any
) -> None:
    files, _ = split_patches(DIFF)
    late = LateDiffs(WorkspaceDiff(DiffSource.CHECKPOINTS, files))
    screen = DiffScreen(late)
    app = OhtuiApp(app_options)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await app.push_screen(screen)
        await wait(pilot, lambda: late.waiting != [], what="the question")
        assert str(screen.query_one("#summary", Static).visual) == LOADING
        await pilot.press("m")
        assert screen.picking
        late.answer()
        await wait(pilot, lambda: screen.diff is not None, what="the answer")
        assert not screen.query_one("#files").display  # the messages stay in front
        await pilot.press("escape")
        assert not screen.picking and screen.query_one("#files").display
        assert screen.query_one("#files", OptionList).option_count == 4
        assert "README.md" in str(screen.query_one("#file-heading", Static).visual)
        await pilot.press("m", "down", "enter")  # since message 2: asked again
        await wait(pilot, lambda: len(late.asked) == 2, what="the second question")
        assert late.asked == [None, "e2"]
        assert str(screen.query_one("#title", Static).visual).startswith("Changes since message 2")


def test_a_file_cut_short_says_so_in_its_counts_and_at_its_end() -> None:
    head = "diff --git a/a b/a\n--- /dev/null\n+++ b/a\n@@ -0,0 +1,9 @@\n"
    text = head + "+1\n+2\n[diff cut at 9 bytes]\n"
    files, cut = split_patches(text)
    assert cut and files[0].cut
    assert str(counts(files[0])) == "+2 (cut)"
    assert hunk_lines(files[0])[-1] == (DiffLine.CONTEXT, CUT)
    whole = WorkspaceDiff(DiffSource.CHECKPOINTS, files, cut=True)
    assert totals(whole) == "1 file changed · +2 -0 (counted up to where the diff is cut)"
