"""Screen-reader mode in the real app (Pilot): plain lines that say their role, no box
drawing, no animation, approval choices as numbered options, reachable with Tab and Enter."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, ClassVar

import pytest
from chat_helpers import USAGE, cells, chat_ready, run_over, screen_text, status, submit
from llm_server import ScriptedLLMServer
from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Input, TextArea

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screen_reader import SCREEN_READER_CLASS
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.screens.reject_reason import RejectReasonScreen
from ohtui.tui.screens.settings import SettingsScreen
from ohtui.tui.widgets.cells import ActionCell, Cell, UserCell
from ohtui.tui.widgets.numbered_choices import ChoiceLine
from ohtui.tui.widgets.status_bar import StatusBar

pytestmark = pytest.mark.anyio

SIZE = (100, 30)
SHAPES = re.compile("[\u2500-\u259f\u2800-\u28ff]")
"""Box drawing, block elements, braille: what a screen reader reads out as shapes."""
OUR_GLYPHS = re.compile("[❯✓✗⏸⚙✎☰●○⇄⇱☑◐☐]")
"""The glyphs the normal look uses for meaning."""


def script_a_turn(llm_server: ScriptedLLMServer) -> None:
    """An agent turn: a few words and a command with its output, then the answer."""
    llm_server.reply_tool_call(
        "terminal",
        {"command": "printf 'one\\ntwo\\n'", "security_risk": "LOW"},
        text="Let me look.",
        usage=USAGE,
    )
    llm_server.reply_text("It printed **two** lines:\n\n- one\n- two", usage=USAGE)


def script_two_actions(llm_server: ScriptedLLMServer) -> None:
    """A HIGH-risk command and a MEDIUM-risk edit, both waiting for approval."""
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "rm -rf ~/some/dir"}),
            (
                "file_editor",
                {
                    "command": "str_replace",
                    "path": "src/app.py",
                    "old_str": "import os\nprint('old')\n",
                    "new_str": "import os\nprint('new')\n",
                    "security_risk": "MEDIUM",
                },
            ),
        ],
        text="I will clean up and fix the print.",
        usage=USAGE,
    )


def lines_of(app: OhtuiApp) -> list[str]:
    """The screen's non-blank lines, stripped."""
    return [line.strip() for line in screen_text(app).splitlines() if line.strip()]


async def run_turn(pilot: Any, wait: Any, text: str) -> None:
    app = pilot.app
    await wait(pilot, lambda: chat_ready(app), what="the conversation")
    await submit(pilot, text)
    await wait(pilot, lambda: status(app) == "finished", what="the run")
    await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)
    app.clear_notifications()
    await pilot.pause()


async def test_a_turn_reads_as_plain_lines_that_say_their_role(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.screen_reader = True
    script_a_turn(llm_server)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turn(pilot, wait, "What does it print?")
        lines = lines_of(app)
        text = screen_text(app)
        for expected in (
            "you: What does it print?",
            "agent: Let me look.",
            "command: printf 'one\\ntwo\\n', LOW risk",
            "result: exit 0",
            "output: one",
            "two",
            "agent: It printed two lines:",  # Markdown without its ** marks
        ):
            assert expected in lines, (expected, lines)
        order = [lines.index(line) for line in ("you: What does it print?", "output: one")]
        assert order == sorted(order)
        assert lines[0].startswith("status: finished, model openai/test-model")
        assert "approvals: confirm risky" in " ".join(lines[:3])
        assert not SHAPES.search(text), SHAPES.findall(text)
        assert not OUR_GLYPHS.search(text), OUR_GLYPHS.findall(text)
        assert "ctrl+c Stop" in text and "^c" not in text  # keys in words
        assert app.animation_level == "none"
        assert "Message the agent, Shift+Enter new line" in text
        composer = app.chat.query_one(TextArea) if app.chat else None
        assert composer is not None and composer.has_focus and not composer.cursor_blink


async def test_the_normal_look_keeps_its_glyphs_and_borders(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """Without the mode nothing changes: the same turn draws the prompt mark, the tool icon
    and the risk badge, and the welcome box has its border."""
    script_a_turn(llm_server)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turn(pilot, wait, "What does it print?")
        text = screen_text(app)
        assert not app.has_class(SCREEN_READER_CLASS) and app.animation_level != "none"
        assert "❯ What does it print?" in text
        assert "$ printf 'one\\ntwo\\n'   LOW" in text and "✓ exit 0" in text
        assert "you:" not in text and "command:" not in text


async def test_while_it_runs_no_line_changes_on_its_own(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """A command that runs until the test lets it end: the status bar says "running" without
    a ticking clock, and two reads of the screen a second apart are the same."""
    app_options.screen_reader = True
    app_options.policy = "never"
    wait_for_go = "until [ -e go ]; do sleep 0.05; done; echo went"
    llm_server.reply_tool_call("terminal", {"command": wait_for_go, "security_risk": "LOW"})
    llm_server.reply_text("Went.", usage=USAGE)
    clock = [0.0]
    app_options.clock = lambda: clock[0]
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        await submit(pilot, "Wait for it")
        await wait(pilot, lambda: bool(cells(app, ActionCell)), what="the command's cell")
        app.clear_notifications()
        await pilot.pause(0.2)
        before = screen_text(app)
        clock[0] += 5  # the run's clock moves on: a ticking status bar would show it
        await pilot.pause(1.1)
        assert screen_text(app) == before
        assert before.lstrip().startswith("status: running, model")
        assert f"command: {wait_for_go}, LOW risk" in before
        assert "status: running" in lines_of(app)  # the command's own line
        (project / "go").touch()
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        await wait(pilot, lambda: "output: went" in lines_of(app), what="its output")


async def test_approval_choices_are_numbered_and_a_number_picks_one(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.screen_reader = True
    app_options.policy = "always"
    script_two_actions(llm_server)
    llm_server.reply_text("Left it alone.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        await submit(pilot, "Clean up")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the dialog")
        await pilot.pause()
        lines = lines_of(app)
        text = screen_text(app)
        assert lines[0].startswith("needs approval: 2 actions wait for your approval")
        assert "> undecided: HIGH risk terminal    rm -rf ~/some/dir" in lines
        assert "undecided: MEDIUM risk file_editor edit src/app.py" in lines
        for number, label in enumerate(
            (
                "Approve all 2",
                "Reject all 2 with a reason",
                "Always allow (edit a rule, then approve)",
                "Change the approval policy",
                "Decide later",
            ),
            1,
        ):
            assert any(line.endswith(f"{number}. {label}") for line in lines), (label, lines)
        assert "> 1. Approve all 2" in lines  # the first choice has the focus
        assert "up/down move" in text and "↑" not in text
        assert not SHAPES.search(text) and "status:" not in text  # the chat is hidden
        await pilot.press("2")
        await wait(pilot, lambda: isinstance(app.screen, RejectReasonScreen), what="the reason")
        app.screen.query_one(Input).value = "keep it"
        await pilot.press("enter")
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)
        await pilot.pause()
        assert "error: rejected: keep it" in lines_of(app)


async def test_approval_choices_are_reached_with_tab_and_taken_with_enter(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.screen_reader = True
    app_options.policy = "always"
    llm_server.reply_tool_call("terminal", {"command": "touch made.txt"})
    llm_server.reply_text("Made it.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        await submit(pilot, "Make a file")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the dialog")
        await pilot.pause()
        seen = []
        for _ in range(7):  # every choice, then round to the first again
            focused = app.focused
            assert isinstance(focused, ChoiceLine)
            seen.append(focused.choice.label)
            await pilot.press("tab")
        assert seen[0] == seen[-1] == "Approve" and len(set(seen)) == 6, seen
        assert "Approve it outside the sandbox, this once" in seen or len(set(seen)) == 6
        while not (isinstance(app.focused, ChoiceLine) and app.focused.choice.label == "Approve"):
            await pilot.press("tab")
        await pilot.press("enter")
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)
        await pilot.pause()
        lines = lines_of(app)
        assert "command: touch made.txt" in " ".join(lines) and "result: exit 0" in lines


async def test_cells_of_any_kind_read_as_their_role_and_what_they_show() -> None:
    """A cell class written without screen-reader mode in mind (another feature's) comes out
    as plain text too: its role, then what it draws, glyphs in words, shapes dropped."""

    class DiffStatCell(Cell):
        ROLE = "note"

        def render(self) -> Content:
            return Content.styled("✓ 3 files changed ─── ⚙ +12 −4", "bold $text-success")

    class Reader(App[None]):
        AUTO_FOCUS: ClassVar[str | None] = None

        def compose(self) -> ComposeResult:
            yield DiffStatCell()
            yield UserCell("hello ❯ there")

    app = Reader()
    app.add_class(SCREEN_READER_CLASS)
    async with app.run_test(size=(60, 6)) as pilot:
        await pilot.pause()
        first, second = app.query(Cell)
        assert str(first.render()) == "note: ok 3 files changed +12 −4"
        assert str(second.render()) == "you: hello ❯ there"  # the user's own text stays
        assert str(first.drawn()) == "✓ 3 files changed ─── ⚙ +12 −4"
        app.remove_class(SCREEN_READER_CLASS)
        assert str(first.render()) == "✓ 3 files changed ─── ⚙ +12 −4"


async def test_the_settings_screen_is_plain_and_walked_with_tab(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """Every switch says on or off, and Tab reaches the Screen reader row, which saves."""
    app_options.screen_reader = True
    app = OhtuiApp(app_options)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        await submit(pilot, "/settings")
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the settings")
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        await wait(pilot, lambda: screen._catalog is not None, what="the settings to load")
        target = screen.query_one("#setting-ui-screen-reader")
        for _ in range(80):
            if app.focused is target:
                break
            await pilot.press("tab")
        assert app.focused is target, "Tab never reached the Screen reader switch"
        text = screen_text(app)
        assert "Screen reader" in text and not SHAPES.search(text), SHAPES.findall(text)
        assert re.search(r"Screen reader\s+off\b", text), text
        await pilot.press("enter")  # a switch toggles with Enter
        await pilot.pause()
        assert re.search(r"Screen reader\s+on\b", screen_text(app))
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: app.screen is app.chat, what="back to the chat")
    assert app_options.config_file is not None
    saved = tomllib.loads(app_options.config_file.read_text(encoding="utf-8"))
    assert saved["ui"]["screen_reader"] is True


@pytest.mark.parametrize(
    ("config", "environ", "flag", "on"),
    [
        ("screen_reader = true", {}, False, True),
        ("", {"OHTUI_SCREEN_READER": "yes"}, False, True),
        ("screen_reader = true", {"OHTUI_SCREEN_READER": "0"}, False, False),
        ("screen_reader = false", {"OHTUI_SCREEN_READER": "no"}, True, True),
        ("screen_reader = 3", {}, False, False),  # not a switch: off, reported once loaded
    ],
    ids=["file", "variable", "variable-wins", "flag-wins", "bad-file-value"],
)
async def test_the_mode_comes_from_the_flag_the_variable_or_the_file(
    app_options: AppOptions, config: str, environ: dict[str, str], flag: bool, on: bool
) -> None:
    assert app_options.config_file is not None
    app_options.config_file.write_text(f"[ui]\nauto_title = false\n{config}\n")
    app_options.environ = environ
    app_options.screen_reader = flag
    app = OhtuiApp(app_options)
    assert app.screen_reader is on and app.has_class(SCREEN_READER_CLASS) is on
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.chat is not None
        bar = app.chat.query_one(StatusBar)
        assert str(bar.render()).startswith("status: ") is on


def test_snapshot_a_turn_in_screen_reader_mode(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """The chat after a turn with a command and its output: plain role lines, the status
    bar in words, no borders; the composer's hint above the footer."""
    app_options.screen_reader = True
    script_a_turn(llm_server)

    async def run_before(pilot: Any) -> None:
        await run_turn(pilot, wait, "What does it print?")
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=run_before)


def test_snapshot_the_approval_dialog_in_screen_reader_mode(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """The dialog alone on the screen, from its top: the actions with their marks and risks
    in words, the detail, the numbered choices (the first focused) and the keys in words."""
    app_options.screen_reader = True
    app_options.policy = "always"
    script_two_actions(llm_server)

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        await submit(pilot, "Clean up")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the dialog")
        app.clear_notifications()
        await pilot.pause()

    app = OhtuiApp(app_options)
    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    finally:
        if app.chat is not None:
            app.shutdown()


async def test_no_box_drawing_reaches_the_screen_whatever_draws_it(
    app_options: AppOptions, wait: Any
) -> None:
    """A widget the mode knows nothing of (a Rich table with its box, a rule) is painted with
    spaces where its lines were; its words stay."""
    from rich.table import Table
    from textual.widgets import Static

    app_options.screen_reader = True
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        table = Table("file", "lines")
        table.add_row("parser.py", "12")
        assert app.chat is not None
        await app.chat.view.mount(Static(table, id="table"))
        await pilot.pause()
        text = screen_text(app)
        assert re.search(r"file\s+lines", text) and re.search(r"parser\.py\s+12", text)
        assert not SHAPES.search(text), SHAPES.findall(text)


async def test_deciding_later_by_number_leaves_a_line_that_says_what_waits(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.screen_reader = True
    app_options.policy = "always"
    script_two_actions(llm_server)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        await submit(pilot, "Clean up")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the dialog")
        app.set_focus(None)  # the number works wherever the focus is
        await pilot.press("5")
        await wait(pilot, lambda: app.screen is app.chat, what="back to the chat")
        app.clear_notifications()
        await pilot.pause()
        lines = lines_of(app)
        assert (
            "needs approval: 2 actions wait for your approval. Press Ctrl+O to review them."
            in lines
        )
        assert lines.count("needs approval: waiting for your approval") == 2
        assert "command: rm -rf ~/some/dir, HIGH risk" in lines
        assert "edit: edit src/app.py, MEDIUM risk" in lines
        assert not OUR_GLYPHS.search(screen_text(app))


async def test_radio_buttons_say_which_is_chosen_in_letters() -> None:
    from textual.widgets import RadioSet

    from ohtui.tui.widgets.marked_choices import MarkedRadioButton

    class Radios(App[None]):
        def compose(self) -> ComposeResult:
            with RadioSet():
                yield MarkedRadioButton("this session")
                yield MarkedRadioButton("this workspace", value=True)

    app = Radios()
    app.add_class(SCREEN_READER_CLASS)
    async with app.run_test(size=(40, 4)) as pilot:
        await pilot.pause()
        shown = [str(button.render()).strip() for button in app.query(MarkedRadioButton)]
        assert shown == ["( ) this session", "(x) this workspace"]


def test_markdown_reads_without_its_drawing() -> None:
    from ohtui.tui.widgets.cells import plain_markdown

    text = "# Files\n\n| file | size |\n|---|:---:|\n| a.txt | 2 |\n\n---\n\n> quoted `code`"
    assert plain_markdown(text).split("\n") == [
        "Files",
        "",
        "file, size",
        "a.txt, 2",
        "",
        "",
        "> quoted code",
    ]


async def test_dialogs_and_screens_are_walked_with_tab_and_taken_with_enter(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """From the composer Tab reaches the newest cell (its "> " mark) and Enter expands it;
    /help closes with Enter; the policy picker takes the focus and Enter chooses; the
    conversation picker's Tab goes between its list and its search. No shapes anywhere."""
    from ohtui.tui.screens.help import HelpScreen
    from ohtui.tui.screens.picker import PickerScreen
    from ohtui.tui.screens.policy_picker import PolicyPickerScreen

    app_options.screen_reader = True
    llm_server.reply_tool_call("terminal", {"command": "seq 1 20", "security_risk": "LOW"})
    llm_server.reply_text("Counted.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turn(pilot, wait, "count")
        await pilot.press("tab")
        await pilot.press("up")  # from the answer to the command
        focused = app.focused
        assert isinstance(focused, ActionCell)
        assert "> command: seq 1 20, LOW risk" in lines_of(app)
        assert "… 14 more lines, enter to expand" in lines_of(app)
        await pilot.press("enter")
        await pilot.pause()
        assert focused.expanded and "20" in lines_of(app)
        await pilot.press("escape")  # back to the composer

        for command, screen_type, walk, leave in (
            ("/help", HelpScreen, 1, "enter"),
            ("/confirm", PolicyPickerScreen, 1, "enter"),
            ("/resume", PickerScreen, 2, "escape"),
        ):
            await submit(pilot, command)
            await wait(pilot, lambda t=screen_type: isinstance(app.screen, t), what=command)
            await pilot.pause(0.3)
            seen = set()
            for _ in range(walk + 1):
                assert app.focused is not None, f"nothing has the focus on {command}"
                seen.add(app.focused)
                await pilot.press("tab")
            assert len(seen) == walk, (command, seen)
            text = screen_text(app)
            assert not SHAPES.search(text), (command, SHAPES.findall(text))
            await pilot.press(leave)
            await wait(pilot, lambda: app.screen is app.chat, what=f"{command} to close")


async def test_the_status_line_says_in_words_what_colour_and_glyphs_say() -> None:
    import time

    from ohtui.settings.choices import ConfirmationPolicy
    from ohtui.tui.status import RunStatus

    class Bar(App[None]):
        def compose(self) -> ComposeResult:
            yield StatusBar(lambda: 0.0)

    app = Bar()
    app.add_class(SCREEN_READER_CLASS)
    async with app.run_test(size=(200, 3)) as pilot:
        bar = app.query_one(StatusBar)
        bar.status = RunStatus.RUNNING
        bar.model = "openai/test-model"
        bar.policy = ConfirmationPolicy.NEVER
        bar.context_used, bar.context_window, bar.context_trigger = 90_000, 100_000, 1.0
        bar.server, bar.link = "devbox:8000", "reconnecting…"
        bar.sandbox = "off"
        bar.show_activity("retrying 2/5", until=time.monotonic() + 30, reason="rate limited")
        await pilot.pause()
        assert str(bar.render()) == (
            "status: running, retrying 2/5: rate limited, model openai/test-model, context "
            "90k of 100k tokens, near the limit, cost $0.00, server devbox:8000 reconnecting…, "
            "no sandbox, approvals: never confirm"
        )
        assert bar._ticker is None  # no clock ticking in the line
