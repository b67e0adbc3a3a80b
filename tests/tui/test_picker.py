"""The conversation picker, driven with Pilot over conversations saved by the real engine.

Conversations are made with LocalConversation and the scripted LLM server; the store's clock
is patched so "updated" times are known, and the picker gets a fixed `now`. HOME is the test's
tmp directory, so workspaces show as ~/project whatever the tmp path is.
"""

from __future__ import annotations

import asyncio
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import screen_text
from holder import held_elsewhere
from llm_server import ScriptedLLMServer
from textual import events
from textual.app import App
from textual.content import Content
from textual.css.stylesheet import Stylesheet
from textual.geometry import Size
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static

import ohtui.sdk.conversation.store as store_module
import ohtui.tui.screens.picker as picker_module
import ohtui.tui.screens.picker_preview as preview_module
from ohtui.sdk import LLM, Agent, AlwaysConfirm, Conversation, ConversationExecutionStatus, Tool
from ohtui.sdk.conversation import list_conversations
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.tui.app.preload import preload_picker
from ohtui.tui.picker_rows import relative_time
from ohtui.tui.screens.confirm import ConfirmScreen
from ohtui.tui.screens.picker import PickerScreen
from ohtui.tui.screens.picker_header import show
from ohtui.tui.screens.picker_listing import RowsReader
from ohtui.tui.screens.text_prompt import TextPromptScreen
from ohtui.tui.style_preload import css_files
from ohtui.tui.widgets.marked import HIGHLIGHT_MARK

NOW = 1_750_000_000.0
MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
SIZE = (100, 30)
UNSET = "unset"

pytestmark = pytest.mark.anyio


class Host(App[None]):
    """An empty app that pushes the picker and keeps what it dismissed with."""

    def __init__(self, picker: PickerScreen) -> None:
        super().__init__()
        self.picker = picker
        self.result: str | None = UNSET
        self.notes: list[str] = []

    def on_mount(self) -> None:
        self.push_screen(self.picker, self._picked)

    def _picked(self, result: str | None) -> None:
        self.result = result

    def notify(self, message: str, **kwargs: Any) -> None:
        self.notes.append(message)
        super().notify(message, **kwargs)


@dataclass
class Clock:
    """The time the conversation store writes into `created_at` / `updated_at`."""

    value: float = NOW


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is tmp: workspaces under it show as ~/..., the same in every run."""
    monkeypatch.setenv("HOME", str(tmp_path.resolve()))
    return tmp_path.resolve()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(store_module, "_now", lambda: clock.value)
    return clock


@pytest.fixture
def conversations_dir(tmp_path: Path) -> Path:
    return tmp_path / "data" / "conversations"


@pytest.fixture
def project(home: Path) -> Path:
    path = home / "project"
    path.mkdir()
    return path


@pytest.fixture
def other(home: Path) -> Path:
    path = home / "other"
    path.mkdir()
    return path


@dataclass
class Saver:
    """Saves conversations through the real engine, at a given store time."""

    server: ScriptedLLMServer
    llm: LLM
    conversations_dir: Path
    clock: Clock

    def __call__(
        self,
        workspace: Path,
        exchanges: list[tuple[str, str]],
        *,
        ago: float,
        title: str | None = None,
        conversation_id: str | None = None,
        waiting: str | None = None,
        finish: str | None = None,
    ) -> str:
        """Each exchange is (user message, agent reply); `waiting` ends on a command that
        waits for approval, `finish` on the finish tool. Returns the id (hex)."""
        self.clock.value = NOW - ago
        tools = [Tool(name="terminal")] if waiting else []
        conv = Conversation(
            agent=Agent(llm=self.llm, tools=tools),
            workspace=workspace,
            persistence_dir=self.conversations_dir,
            conversation_id=uuid.UUID(conversation_id) if conversation_id else None,
            visualizer=None,
        )
        try:
            for user, reply in exchanges:
                self.server.reply_text(reply)
                conv.send_message(user)
                conv.run()
            if waiting:
                conv.set_confirmation_policy(AlwaysConfirm())
                self.server.reply_tool_call("terminal", {"command": waiting})
                conv.send_message("Go ahead.")
                conv.run()
                assert (
                    conv.state.execution_status
                    is ConversationExecutionStatus.WAITING_FOR_CONFIRMATION
                )
            if finish:
                self.server.reply_tool_call("finish", {"message": finish})
                conv.send_message("Wrap up.")
                conv.run()
            if title:
                conv.state.title = title
            return conv.id.hex
        finally:
            conv.close()


@pytest.fixture
def save(
    llm_server: ScriptedLLMServer, llm: LLM, conversations_dir: Path, clock: Clock
) -> Iterator[Saver]:
    yield Saver(llm_server, llm, conversations_dir, clock)


def text(app: App[None], selector: str) -> str:
    """The plain text of a Static on the active screen."""
    rendered = app.screen.query_one(selector, Static).render()
    return rendered.plain if isinstance(rendered, Content) else str(rendered)


async def type_text(pilot: Pilot[None], text: str) -> None:
    """Type text one key per character."""
    await pilot.press(*[("space" if char == " " else char) for char in text])


def picker(conversations_dir: Path, workspace: Path, current_id: str | None = None) -> Host:
    return Host(PickerScreen(conversations_dir, workspace, current_id=current_id, now=lambda: NOW))


async def listed(pilot: Pilot[None], wait: Any, count: int | None = None) -> PickerScreen:
    """Wait until the picker shows its rows (or its empty state) and, if any, a preview."""
    assert isinstance(pilot.app, Host)
    screen = pilot.app.picker

    def ready() -> bool:
        if not screen.is_mounted or screen.pending:
            return False
        if count is not None and len(screen.rows) != count:
            return False
        if not screen.rows:
            return screen.query_one("#empty").display
        return bool(preview_text(screen))

    await wait(pilot, ready, what=f"{count if count is not None else 'the'} rows")
    return screen


def row_texts(screen: PickerScreen) -> list[str]:
    """Each row as plain text, its lines joined by " | "."""
    option_list = screen.query_one(OptionList)
    texts = []
    for index in range(option_list.option_count):
        prompt = option_list.get_option_at_index(index).prompt
        assert isinstance(prompt, Content)
        texts.append(" | ".join(line.strip() for line in prompt.plain.splitlines()))
    return texts


def preview_text(screen: PickerScreen) -> str:
    return text(screen.app, "#preview-events")


def ids(screen: PickerScreen) -> list[str]:
    return [row.id for row in screen.rows]


# --- listing --------------------------------------------------------------------------------


async def test_lists_this_workspace_newest_first_with_what_each_row_shows(
    save: Saver, conversations_dir: Path, project: Path, other: Path, wait: Any
) -> None:
    old = save(project, [("Port the CLI to click", "Done.")], ago=4 * DAY, title="Port to click")
    new = save(project, [("Write a README\nwith install steps", "Here it is.")], ago=5 * MINUTE)
    mid = save(project, [("Speed up the tests", "They run in 2 s now.")], ago=3 * HOUR + 59)
    save(other, [("Elsewhere", "Yes.")], ago=MINUTE, title="In another workspace")

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 3)
        assert ids(screen) == [new, mid, old]
        counts = {s.id: s.event_count for s in list_conversations(conversations_dir)}
        rows = row_texts(screen)
        # Untitled: the first line of the first message stands in for the title.
        assert rows[0] == (
            f"Write a README | 5 min ago · ✓ finished · {counts[new]} events · ~/project · "
            "openai/test-model"
        )
        assert rows[1].startswith("Speed up the tests | 3 h ago · ✓ finished ·")
        assert rows[2].startswith("Port to click | 4 days ago · ✓ finished ·")
        assert screen.option_list.has_focus
        assert "this workspace: ~/project · 3 conversations" in text(app, "#scope")


async def test_waiting_for_approval_stands_out(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    save(project, [("Hi", "Hello.")], ago=HOUR, title="Quiet one")
    waiting = save(project, [], ago=MINUTE * 2, title="Needs you", waiting="rm -rf build/")

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 2)
        assert ids(screen)[0] == waiting
        prompt = screen.option_list.get_option_at_index(0).prompt
        assert isinstance(prompt, Content)
        assert "⏸ waiting for approval" in prompt.plain
        badge = [
            str(span.style)
            for span in prompt.spans
            if "waiting" in prompt.plain[span.start : span.end]
        ]
        assert badge and "$text-warning" in badge[0]
        assert "waiting for approval" in text(app, "#preview-head")
        # The command waiting for approval is the preview's last line.
        assert preview_text(screen).splitlines()[-1] == "$ rm -rf build/"


def test_relative_times() -> None:
    from datetime import UTC, datetime

    def ago(seconds: float) -> str:
        return relative_time(datetime.fromtimestamp(NOW - seconds, UTC), NOW)

    assert ago(-5) == ago(30) == "just now"
    assert ago(5 * MINUTE + 1) == "5 min ago"
    assert ago(3 * HOUR) == "3 h ago"
    assert ago(DAY + HOUR) == "yesterday"
    assert ago(4 * DAY) == "4 days ago"
    assert ago(30 * DAY) == datetime.fromtimestamp(NOW - 30 * DAY).strftime("%Y-%m-%d")


# --- search ---------------------------------------------------------------------------------


async def test_typing_searches_every_message_and_esc_clears(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    deep = save(
        project,
        [
            ("Look at the parser", "It splits on spaces."),
            ("And the config loader?", "It reads the zanzibar section last, which is the bug."),
            ("Fix it", "Fixed."),
        ],
        ago=2 * HOUR,
        title="Parser and config",
    )
    save(project, [("Unrelated", "Indeed.")], ago=HOUR, title="Unrelated")

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 2)
        await type_text(pilot, "zanzib")  # typed on the list: goes to the search box
        assert screen.search_input.has_focus
        assert screen.search_input.value == "zanzib"
        screen = await listed(pilot, wait, 1)
        assert ids(screen) == [deep]
        assert "reads the zanzibar section" in row_texts(screen)[0]
        assert "1 match" in text(app, "#scope")

        await pilot.press("escape")
        screen = await listed(pilot, wait, 2)
        assert screen.search_input.value == ""
        assert screen.option_list.has_focus
        assert app.result == UNSET  # the first Esc only cleared the search

        await type_text(pilot, "xyzzy")  # on the list again: still goes to the search box
        assert screen.search_input.has_focus and screen.search_input.value == "xyzzy"
        await listed(pilot, wait, 0)
        assert text(app, "#empty") == "No conversation in this workspace mentions 'xyzzy'."


async def test_enter_in_the_search_box_resumes_a_single_result(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    save(project, [("alpha one", "ok")], ago=2 * HOUR)
    save(project, [("alpha two", "ok")], ago=HOUR)
    only = save(project, [("beta", "ok")], ago=3 * HOUR)

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, wait, 3)
        await type_text(pilot, "alpha")
        screen = await listed(pilot, wait, 2)
        await pilot.press("down")  # ↓ moves to the results
        assert screen.option_list.has_focus
        await pilot.press("!")  # typing goes on in the search box
        assert screen.search_input.has_focus and screen.search_input.value == "alpha!"
        await pilot.press("backspace")
        await listed(pilot, wait, 2)
        await pilot.press("enter")  # two results: Enter moves to the list
        assert screen.option_list.has_focus and app.result == UNSET
        await pilot.press("escape")
        await type_text(pilot, "beta")
        await listed(pilot, wait, 1)
        await pilot.press("enter")
        assert app.result == only


# --- preview --------------------------------------------------------------------------------


async def test_preview_shows_the_last_exchanges_of_the_highlighted_one(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    first = save(
        project,
        [("Rename the module", "Renamed to core.py."), ("Update the imports", "All updated.")],
        ago=MINUTE * 10,
        title="Rename module",
    )
    second = save(project, [("What is 2+2?", "4.")], ago=HOUR, finish="Answered.")

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 2)
        assert screen.highlighted is not None and screen.highlighted.id == first
        shown = preview_text(screen)
        assert "› Update the imports\nAll updated." in shown
        assert "› Rename the module" in shown
        head = text(app, "#preview-head")
        assert first in head and "Rename module" in head and "~/project" in head

        await pilot.press("down")
        await wait(pilot, lambda: "What is 2+2?" in preview_text(screen), what="the preview")
        assert preview_text(screen).endswith("› Wrap up.\n✓ Answered.")
        assert second in text(app, "#preview-head")
        assert "✓ finished" in text(app, "#preview-head")


async def test_preview_renders_markdown_and_shows_the_cost(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    save.llm = save.llm.model_copy(update={"input_cost_per_token": 0.001})
    reply = "## Plan\n**Renamed** the module to `core.py`:\n- one\n- [docs](https://x.example)"
    save(project, [("Rename it", reply)], ago=MINUTE)

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 1)
        shown = preview_text(screen)
        assert "Plan\nRenamed the module to core.py:\n• one\n• docs" in shown
        assert "**" not in shown and "`" not in shown and "##" not in shown
        # The scripted server reports its prompt tokens; each costs $0.001 here.
        assert re.search(r"^cost +\$\d+\.\d\d$", shown.splitlines()[0])
        assert not shown.startswith("cost      $0.00")


# --- delete ---------------------------------------------------------------------------------


async def test_delete_asks_first_and_cancel_keeps_it(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    keep = save(project, [("Keep me", "ok")], ago=HOUR, title="Keep me")
    doomed = save(project, [("Delete me", "ok")], ago=MINUTE, title="Delete me")

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 2)
        await pilot.press("ctrl+d")
        assert isinstance(app.screen, ConfirmScreen)
        assert text(app, "#question") == "Delete 'Delete me'?"
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("ctrl+d", "enter")  # the dialog opens on Cancel
        assert app.screen is screen and ids(screen) == [doomed, keep]

        await pilot.press("ctrl+d", "right", "enter")
        await wait(pilot, lambda: ids(screen) == [keep], what="the row to go")
        assert [s.id for s in list_conversations(conversations_dir)] == [keep]
        assert not (conversations_dir / doomed).exists()
        assert "Deleted 'Delete me'." in app.notes
        assert screen.highlighted is not None and screen.highlighted.id == keep


async def test_the_open_conversation_cannot_be_deleted(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    current = save(project, [("I am open", "ok")], ago=MINUTE, title="Open one")

    app = picker(conversations_dir, project, current_id=current)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 1)
        assert row_texts(screen)[0].startswith("Open one | ● open now · 1 min ago")
        await pilot.press("ctrl+d")
        assert app.screen is screen  # no confirmation: refused at once
        assert any("open now" in note and "cannot be deleted" in note for note in app.notes)
        assert [s.id for s in list_conversations(conversations_dir)] == [current]


# --- typing never destroys ---------------------------------------------------------------------


def on_disk(conversations_dir: Path) -> dict[str, str | None]:
    """Each saved conversation's id and title, read from the store."""
    return {s.id: s.title for s in list_conversations(conversations_dir)}


@pytest.mark.parametrize("typed", ["dynamic", "yes", "dy", "d y", "wry", "/dry"])
@pytest.mark.parametrize("start_in", ["list", "search"])
async def test_typing_only_searches(
    save: Saver,
    conversations_dir: Path,
    project: Path,
    other: Path,
    wait: Any,
    typed: str,
    start_in: str,
) -> None:
    save(project, [("Keep me", "ok")], ago=HOUR, title="Keep me")
    save(project, [("Dynamic dispatch", "ok")], ago=MINUTE, title="Dynamic dispatch")
    save(other, [("Elsewhere", "ok")], ago=MINUTE, title="Elsewhere")
    before = on_disk(conversations_dir)

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 2)
        if start_in == "search":
            screen.search_input.focus()
        await type_text(pilot, typed)
        await pilot.pause()
        assert app.screen is screen, f"typing {typed!r} opened {app.screen!r}"
        assert screen.search_input.value == typed
        assert screen.scope == "workspace"
        await type_text(pilot, "yyyy")  # a dialog would take these as answers
        await pilot.pause()
        assert app.screen is screen
    assert on_disk(conversations_dir) == before  # none deleted, none renamed


async def test_delete_takes_a_key_no_typing_sends_and_a_deliberate_confirm(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    keep = save(project, [("Keep me", "ok")], ago=HOUR, title="Keep me")
    doomed = save(project, [("Delete me", "ok")], ago=MINUTE, title="Delete me")

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 2)
        await pilot.press("ctrl+d")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert text(app, "#question") == "Delete 'Delete me'?"
        # No typed letter answers, and Enter on the button it opens on cancels.
        await type_text(pilot, "yes dynamic y Y d")
        assert app.screen is dialog
        await pilot.press("enter")
        assert app.screen is screen
        assert set(on_disk(conversations_dir)) == {keep, doomed}

        await pilot.press("delete")  # the Delete key, on the list
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("tab", "enter")  # choose Delete, then press it
        await wait(pilot, lambda: ids(screen) == [keep], what="the row to go")
        assert set(on_disk(conversations_dir)) == {keep}


async def test_commands_work_from_the_search_box(
    save: Saver, conversations_dir: Path, project: Path, other: Path, wait: Any
) -> None:
    save(project, [("alpha", "ok")], ago=HOUR, title="Alpha")
    doomed = save(project, [("beta", "ok")], ago=MINUTE, title="Beta")
    save(other, [("beta elsewhere", "ok")], ago=MINUTE, title="Beta elsewhere")

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, wait, 2)
        await type_text(pilot, "beta")
        screen = await listed(pilot, wait, 1)
        assert screen.search_input.has_focus
        await pilot.press("ctrl+w")  # all workspaces, the query kept
        await listed(pilot, wait, 2)
        assert screen.scope == "all" and screen.search_input.value == "beta"
        await pilot.press("ctrl+w")
        await listed(pilot, wait, 1)
        await pilot.press("ctrl+d")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("right", "enter")
        await wait(pilot, lambda: doomed not in on_disk(conversations_dir), what="deletion")
        assert screen.search_input.value == "beta"


# --- rename ---------------------------------------------------------------------------------


async def test_rename(save: Saver, conversations_dir: Path, project: Path, wait: Any) -> None:
    cid = save(project, [("Make it fast", "ok")], ago=MINUTE, title="Old title")

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 1)
        await pilot.press("ctrl+r")
        prompt = app.screen
        assert isinstance(prompt, TextPromptScreen)
        box = prompt.query_one(Input)
        assert box.value == "Old title"

        await pilot.press("ctrl+u", "enter")  # empty: refused, the dialog stays
        assert app.screen is prompt
        assert text(app, "#message").startswith("A title cannot be empty")

        await type_text(pilot, "Faster startup")
        await pilot.press("enter")
        await wait(
            pilot, lambda: row_texts(screen)[0].startswith("Faster startup |"), what="rename"
        )
        [summary] = list_conversations(conversations_dir)
        assert (summary.id, summary.title) == (cid, "Faster startup")

        await pilot.press("f2", "escape")  # F2 renames too; Esc keeps the title
        assert app.screen is screen
        assert list_conversations(conversations_dir)[0].title == "Faster startup"


# --- leaving --------------------------------------------------------------------------------


async def test_enter_resumes_the_highlighted_conversation(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    save(project, [("newer", "ok")], ago=MINUTE)
    older = save(project, [("older", "ok")], ago=HOUR)

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, wait, 2)
        await pilot.press("down", "enter")
        assert app.result == older


async def test_escape_leaves_with_none(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    save(project, [("hello", "ok")], ago=MINUTE)
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, wait, 1)
        await pilot.press("escape")
        assert app.result is None


# --- workspaces and empty states ---------------------------------------------------------------


async def test_ctrl_w_toggles_between_this_workspace_and_all(
    save: Saver, conversations_dir: Path, project: Path, other: Path, wait: Any
) -> None:
    here = save(project, [("here", "ok")], ago=HOUR)
    there = save(other, [("there", "ok")], ago=MINUTE)

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 1)
        assert ids(screen) == [here]
        assert "ctrl+w all workspaces" in text(app, "#legend")

        await pilot.press("ctrl+w")
        await listed(pilot, wait, 2)
        assert ids(screen) == [there, here]
        assert "~/other" in row_texts(screen)[0]
        assert text(app, "#scope").startswith("all workspaces")
        assert "ctrl+w this workspace" in text(app, "#legend")
        assert screen.highlighted is not None and screen.highlighted.id == here  # kept

        await pilot.press("ctrl+w")
        await listed(pilot, wait, 1)
        assert ids(screen) == [here]


async def test_the_listed_highlight_is_previewed_at_once_a_moved_one_after_a_pause(
    save: Saver, conversations_dir: Path, project: Path, wait: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pause before a preview is read is for a key held down, not for the highlight a
    listing places: with an endless pause, the first row is previewed, the next is not."""
    save(project, [("Older question", "Older answer.")], ago=DAY)
    save(project, [("Newer question", "Newer answer.")], ago=HOUR)
    monkeypatch.setattr(preview_module, "PREVIEW_DELAY", 3600.0)
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 2)  # waits for the preview too
        assert "Newer answer." in preview_text(screen)
        await pilot.press("down")
        await wait(pilot, lambda: "Older question" in text(app, "#preview-head"), what="heading")
        await pilot.pause(0.3)
        assert preview_text(screen) == ""  # still waiting out the pause


def legend_styles(app: App[None]) -> dict[str, str]:
    """Each key of the legend with the style it is drawn in."""
    legend = app.screen.query_one("#legend", Static).content
    assert isinstance(legend, Content)
    return {
        legend.plain[span.start : span.end]: str(span.style)
        for span in legend.spans
        if legend.plain[span.start : span.end] in ("enter", "ctrl+d", "esc")
    }


async def test_the_legend_dims_the_keys_that_do_nothing_and_lights_them_again(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    """Only the keys' styles change, not the words (Content's == compares only the words:
    the legend is still redrawn)."""
    save(project, [("Port the CLI to click", "Done.")], ago=DAY)
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 1)
        lit = legend_styles(app)
        assert lit["enter"] == lit["ctrl+d"] == "bold $text-accent"
        await type_text(pilot, "zzz")
        await listed(pilot, wait, 0)
        dimmed = legend_styles(app)
        assert dimmed["enter"] == dimmed["ctrl+d"] == "$foreground-disabled"
        assert dimmed["esc"] == "bold $text-accent"  # esc clears the search
        await pilot.press("escape")
        await listed(pilot, wait, 1)
        assert legend_styles(app) == lit
        assert screen.highlighted is not None


def test_show_redraws_only_what_changed() -> None:
    """The picker's Statics are given their content again and again (the legend on every
    move): the same content is not redrawn, and a same-size one without a layout."""
    calls: list[bool] = []

    class Recorded(Static):
        def update(self, content: Any = "", *, layout: bool = True) -> None:
            calls.append(layout)
            super().update(content, layout=layout)

    widget = Recorded(Content.styled("enter", "bold"))
    show(widget, Content.styled("enter", "bold"))
    show(widget, Content.styled("enter", "bold"), same_size=True)
    assert calls == []
    show(widget, Content.styled("enter", "dim"), same_size=True)  # same words, new style
    assert calls == [False]
    show(widget, "esc")
    show(widget, "esc")
    assert calls == [False, True]


async def test_empty_states(
    save: Saver, conversations_dir: Path, project: Path, other: Path, wait: Any
) -> None:
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 0)
        assert text(app, "#empty") == "No saved conversations yet."
        await pilot.press("ctrl+d", "delete", "ctrl+r", "f2", "enter")  # nothing to act on
        assert app.screen is screen and app.result == UNSET

    save(other, [("elsewhere", "ok")], ago=MINUTE)
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, wait, 0)
        assert text(app, "#empty") == "None in this workspace — press ctrl+w to see all."
        await pilot.press("ctrl+w")
        await listed(pilot, wait, 1)


async def test_a_damaged_database_is_reported_not_raised(
    conversations_dir: Path, project: Path, wait: Any
) -> None:
    conversations_dir.mkdir(parents=True)
    (conversations_dir / "conversations.db").write_bytes(b"this is not a database" * 100)

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: app.notes, what="a notification")
        assert "not an ohtui conversation database" in app.notes[0]
        assert "cannot be read right now" in text(app, "#empty")
        await pilot.press("escape")
        assert app.result is None


# --- preloaded styles ----------------------------------------------------------------------


async def test_preloaded_styles_leave_nothing_to_parse_when_the_picker_opens(
    save: Saver, conversations_dir: Path, project: Path, wait: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ohtui does once idle (preload_picker): the picker's CSS and its widgets' default
    CSS are parsed ahead, so its first push adds no source and parses nothing; it opens,
    lists and looks as it does without the preload, and as it would restyled afresh."""
    save(project, [("Port the CLI to click", "Done.")], ago=DAY, title="Port to click")
    parses: list[str] = []
    for name in ("parse", "reparse"):
        method = getattr(Stylesheet, name)

        def counted(self: Stylesheet, _method: Any = method, _name: str = name) -> None:
            parses.append(_name)
            _method(self)

        monkeypatch.setattr(Stylesheet, name, counted)

    def styles(screen: PickerScreen) -> dict[str, str]:
        return {str(node.id): node.styles.css for node in screen.query("*")}

    async def open_picker(preload: bool) -> dict[str, str]:
        """Each widget's styles in the opened picker, by id."""
        app = App[None]()
        async with app.run_test(size=SIZE) as pilot:
            css_file = str(css_files(PickerScreen)[0])
            assert not app.stylesheet.has_source(css_file)
            if preload:
                await preload_picker(app)
                assert app.stylesheet.has_source(css_file)
                assert not await PickerScreen.preload_styles(app)  # nothing left to do
            sources = dict(app.stylesheet.source)
            parses.clear()
            screen = PickerScreen(conversations_dir, project, now=lambda: NOW)
            await app.push_screen(screen)
            await wait(pilot, lambda: bool(screen.rows) and bool(preview_text(screen)))
            if preload:
                assert parses == []
                assert app.stylesheet.source == sources
            else:
                assert "reparse" in parses  # what the preload saves
            assert row_texts(screen)[0].startswith("Port to click | yesterday · ")
            assert "Done." in preview_text(screen)
            opened = styles(screen)
            screen.update_node_styles(animate=False)  # what its first showing leaves out
            assert styles(screen) == opened
            return opened

    assert await open_picker(preload=True) == await open_picker(preload=False)


async def test_opening_lays_the_picker_out_once_and_a_resize_lays_it_out_anew(
    save: Saver, conversations_dir: Path, project: Path, wait: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PickerScreen.on_resize: Textual tells a screen it was resized when it is first laid
    out, at that size, and Screen would lay it out again and the screen below it; the picker
    lets only a real resize through. (Screen._refresh_layout is Textual's (8.2); if this
    finds more layouts, Textual changed and on_resize may be doing nothing.)"""
    save(project, [("Port the CLI to click", "Done.")], ago=DAY, title="Port to click")
    sized: list[tuple[str, Size]] = []
    layout = Screen._refresh_layout

    def counted(self: Screen[Any], size: Size | None = None, scroll: bool = False) -> None:
        if size is not None:  # a layout at a given size: on showing or a resize
            sized.append((type(self).__name__, size))
        layout(self, size, scroll)

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    app = App[None]()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        sized.clear()
        screen = PickerScreen(conversations_dir, project, now=lambda: NOW)
        await app.push_screen(screen)
        await wait(pilot, lambda: bool(screen.rows) and bool(preview_text(screen)))
        assert sized == [("PickerScreen", Size(*SIZE))]
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert ("PickerScreen", Size(80, 24)) in sized
        assert screen.outer_size == Size(80, 24)
        legend = screen.query_one("#legend").region
        assert (legend.width, legend.bottom) == (80, 24)
        assert screen.query_one("#body").region.bottom == legend.y


# --- open elsewhere ------------------------------------------------------------------------


async def test_a_conversation_another_process_has_open_is_marked_and_left_alone(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    free = save(project, [("Free to change", "ok")], ago=HOUR)
    held = save(project, [("Held by another ohtui", "ok")], ago=MINUTE)
    with held_elsewhere(conversations_dir, project, held) as holder:
        app = picker(conversations_dir, project)
        async with app.run_test(size=SIZE) as pilot:
            screen = await listed(pilot, wait, 2)
            assert ids(screen) == [held, free]
            held_row, free_row = row_texts(screen)
            assert held_row.startswith("Held by another ohtui | ● open elsewhere · ")
            assert "open elsewhere" not in free_row
            assert f"held by   pid {holder.pid} on " in text(app, "#preview-head")

            await pilot.press("ctrl+d")
            await pilot.pause()
            assert not isinstance(app.screen, ConfirmScreen)
            assert f"pid {holder.pid}" in app.notes[-1] and "Close it there" in app.notes[-1]
            await pilot.press("ctrl+r")
            await pilot.pause()
            assert not isinstance(app.screen, TextPromptScreen)

            await pilot.press("down")
            await wait(pilot, lambda: "Free to change" in text(app, "#preview-head"), what="it")
            assert "open elsewhere" not in text(app, "#preview-head")
    assert {s.id for s in list_conversations(conversations_dir)} == {held, free}


# --- snapshot -------------------------------------------------------------------------------


def test_snapshot_picker_with_preview(
    snap_compare: Any,
    save: Saver,
    conversations_dir: Path,
    project: Path,
    other: Path,
    wait: Any,
) -> None:
    current = save(
        project,
        [
            (
                "The tokenizer drops the last token of every line.",
                "Found it: `tokens()` stops one short of the end. Fixed, with a test.",
            ),
            (
                "Does it handle empty lines?",
                "Yes: an empty line gives no tokens; the new test covers it.",
            ),
        ],
        ago=5 * MINUTE,
        title="Fix the off-by-one in the tokenizer",
        conversation_id="0123456789abcdef0123456789abcdef",
    )
    save(
        project,
        [("The build directory is full of stale artefacts.", "I can remove it.")],
        ago=3 * HOUR,
        title="Clean the build directory",
        conversation_id="1111111111111111aaaaaaaaaaaaaaaa",
        waiting="rm -rf build/",
    )
    save(
        project,
        [("Write a README with install steps", "Here is a first draft of the README.")],
        ago=DAY + 2 * HOUR,
        conversation_id="2222222222222222bbbbbbbbbbbbbbbb",
    )
    save(
        project,
        [("Upgrade the project to Python 3.12", "Updated pyproject and CI.")],
        ago=4 * DAY,
        title="Upgrade to Python 3.12",
        conversation_id="3333333333333333cccccccccccccccc",
        finish="Upgraded; all tests pass on 3.12.",
    )
    save(other, [("Not listed: another workspace", "ok")], ago=MINUTE)

    app = picker(conversations_dir, project, current)

    async def ready(pilot: Pilot[None]) -> None:
        await listed(pilot, wait, 4)
        app.clear_notifications()
        app.picker.search_input.cursor_blink = False
        await pilot.pause(0.1)

    # Held through the store, as an opener would, without the opener's resave of the row
    # (that would move "updated" to the real time).
    store = ConversationStore(conversations_dir)
    try:
        with store.lease("2222222222222222bbbbbbbbbbbbbbbb"):
            assert snap_compare(app, terminal_size=SIZE, run_before=ready)
    finally:
        store.close()


async def test_without_colour_the_highlighted_row_is_marked(
    save: Saver,
    conversations_dir: Path,
    project: Path,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    save(project, [("First task", "Done.")], ago=HOUR, title="First task")
    save(project, [("Second task", "Done.")], ago=MINUTE, title="Second task")
    app = picker(conversations_dir, project)
    async with app.run_test(size=(80, 24)) as pilot:
        await listed(pilot, wait, 2)

        def marked() -> list[str]:
            lines = screen_text(app).splitlines()  # type: ignore[arg-type]
            return [line.strip() for line in lines if line.lstrip().startswith(HIGHLIGHT_MARK)]

        assert [line.split("  ")[0] for line in marked()] == ["❯ Second task"]
        await pilot.press("down")
        assert [line.split("  ")[0] for line in marked()] == ["❯ First task"]


# --- pages ----------------------------------------------------------------------------------


def quick_save(
    conversations_dir: Path, workspace: Path, count: int, text: str = "task", **kwargs: Any
) -> list[str]:
    """Save `count` conversations of one message each straight through the store (fast), at
    the clock's time; returns their ids."""
    from ohtui.sdk import Message, MessageEvent, TextContent
    from ohtui.sdk.conversation import EventLog

    store = ConversationStore(conversations_dir)
    store._conn.execute("PRAGMA synchronous=OFF")  # durability is not what these test
    ids = []
    try:
        for i in range(count):
            cid = uuid.uuid4().hex
            summary = {"workspace": str(workspace.resolve()), "status": "idle", **kwargs}
            key = store.create(cid, "{}", summary)
            words = text.format(i=i)
            EventLog(store, key).append(
                MessageEvent(
                    source="user",
                    llm_message=Message(role="user", content=[TextContent(text=words)]),
                )
            )
            ids.append(cid)
    finally:
        store.close()
    return ids


async def test_reaching_the_end_reads_the_next_page_with_no_gaps_or_repeats(
    conversations_dir: Path,
    project: Path,
    clock: Clock,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(picker_module, "PAGE_ROWS", 20)
    saved = quick_save(conversations_dir, project, 45)  # all at the same instant
    expected = sorted(saved, reverse=True)  # newest first; ties by id

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 20)
        await pilot.pause(0.3)
        assert len(screen.rows) == 20  # more than a screen: nothing more read yet
        assert "this workspace: ~/project · 45 conversations" in text(app, "#scope")

        await pilot.press("end")  # the highlight reaches the end: the next page comes
        await wait(pilot, lambda: len(screen.rows) == 40, what="the second page")
        assert screen.highlighted is not None and screen.highlighted.id == expected[19]
        screen.option_list.scroll_end(animate=False, immediate=True)  # as the wheel would
        await wait(pilot, lambda: len(screen.rows) == 45, what="the last page")
        await pilot.pause(0.2)
        assert ids(screen) == expected
        assert [screen.option_list.get_option_at_index(i).id for i in range(45)] == expected
        await pilot.press("end", "enter")
        assert app.result == expected[-1]


async def test_a_search_reads_a_page_at_a_time_with_snippets_for_it_only(
    conversations_dir: Path,
    project: Path,
    clock: Clock,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(picker_module, "SEARCH_PAGE_ROWS", 3)
    monkeypatch.setattr(picker_module, "SEARCH_DELAY", 1.0)  # one search for the word typed
    found = quick_save(conversations_dir, project, 8, "the walrus ate part {i}")
    quick_save(conversations_dir, project, 2, "nothing to see")
    asked: list[int] = []
    snippets = ConversationStore._snippets

    def spy(self: ConversationStore, match: str, keys: list[int]) -> dict[int, str]:
        asked.append(len(keys))
        return snippets(self, match, keys)

    monkeypatch.setattr(ConversationStore, "_snippets", spy)
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 10)
        await wait(pilot, lambda: screen._indexed, what="the search index")
        await type_text(pilot, "walr")
        # Three rows of four lines do not fill the list: pages follow until they do.
        screen = await listed(pilot, wait, 8)
        assert sorted(ids(screen)) == sorted(found)
        assert asked and max(asked) <= 3 and sum(asked) == 8  # one lookup per row shown
        assert all("the walrus ate part" in row for row in row_texts(screen))
        assert "8 matches" in text(app, "#scope")


async def test_the_newest_search_wins_and_stale_ones_stop_early(
    conversations_dir: Path,
    project: Path,
    clock: Clock,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    from ohtui.sdk.conversation import listing

    quick_save(conversations_dir, project, 2, "alpha {i}")
    [beta] = quick_save(conversations_dir, project, 1, "beta")
    slow_done = threading.Event()
    formatted: list[int] = []
    page = listing.conversations_page
    prompts = RowsReader.prompts

    def slow_alpha(*args: Any, **kwargs: Any) -> Any:
        result = page(*args, **kwargs)
        if kwargs.get("query") == "alpha":
            slow_done.wait(5)  # until the test lets it finish, long after beta's
        return result

    def counting(self: RowsReader, summaries: Any) -> list[Content]:
        formatted.append(len(summaries.rows))
        return prompts(self, summaries)

    monkeypatch.setattr(listing, "conversations_page", slow_alpha)
    monkeypatch.setattr(RowsReader, "prompts", counting)
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 3)
        await wait(pilot, lambda: screen._indexed, what="the search index")
        screen.search_input.value = "alpha"  # as typed, without a slow machine's pauses
        await pilot.pause(picker_module.SEARCH_DELAY + 0.2)  # alpha's search is under way
        assert screen.pending
        screen.search_input.value = "beta"
        screen = await listed(pilot, wait, 1)
        assert ids(screen) == [beta]
        slow_done.set()  # alpha's rows arrive last...
        await pilot.pause(0.5)
        assert ids(screen) == [beta]  # ...and are dropped
        assert "1 match" in text(app, "#scope")
        assert formatted == [3, 1]  # alpha's page, stale once read, was never formatted


async def test_typing_fast_runs_one_search(
    conversations_dir: Path,
    project: Path,
    clock: Clock,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ohtui.sdk.conversation import listing

    monkeypatch.setattr(picker_module, "SEARCH_DELAY", 1.0)  # room for a slow machine
    [match] = quick_save(conversations_dir, project, 1, "dynamic dispatch")
    quick_save(conversations_dir, project, 1, "static")
    queries: list[str] = []
    page = listing.conversations_page

    def recording(*args: Any, **kwargs: Any) -> Any:
        queries.append(kwargs.get("query", ""))
        return page(*args, **kwargs)

    monkeypatch.setattr(listing, "conversations_page", recording)
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 2)
        await wait(pilot, lambda: screen._indexed, what="the search index")
        await type_text(pilot, "dynam")
        screen = await listed(pilot, wait, 1)
        assert ids(screen) == [match]
        assert [q for q in queries if q] == ["dynam"]


async def test_a_search_before_the_index_is_full_says_so_and_completes(
    conversations_dir: Path,
    project: Path,
    clock: Clock,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    from ohtui.sdk.conversation import search_index

    found = quick_save(conversations_dir, project, 3, "the narwhal {i}")
    go = threading.Event()
    index = search_index.index_in_background

    def held_back(directory: Path, done: Any, failed: Any, stop: Any) -> Any:
        def later() -> None:
            go.wait(10)
            index(directory, done, failed, stop)

        threading.Thread(target=later, daemon=True).start()

    monkeypatch.setattr(search_index, "index_in_background", held_back)
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 3)
        await type_text(pilot, "narwhal")
        await listed(pilot, wait, 0)
        assert "0 matches so far, indexing…" in text(app, "#scope")
        assert "Still indexing" in text(app, "#empty")
        go.set()
        screen = await listed(pilot, wait, 3)
        assert sorted(ids(screen)) == sorted(found)
        assert "3 matches" in text(app, "#scope") and "indexing" not in text(app, "#scope")


async def test_the_preview_reads_pages_of_events_off_the_ui_thread(
    conversations_dir: Path,
    project: Path,
    clock: Clock,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    from ohtui.sdk import Message, MessageEvent, TextContent
    from ohtui.sdk.conversation import EventLog, listing

    monkeypatch.setattr(preview_module, "PREVIEW_EVENTS", 4)
    store = ConversationStore(conversations_dir)
    try:
        key = store.create(uuid.uuid4().hex, "{}", {"workspace": str(project.resolve())})
        log = EventLog(store, key)
        for i in range(60):
            text_ = f"message number {i}"
            log.append(
                MessageEvent(
                    source="user",
                    llm_message=Message(role="user", content=[TextContent(text=text_)]),
                )
            )
    finally:
        store.close()
    calls: list[tuple[int, int | None, bool]] = []
    page = listing.events_page

    def recording(directory: Path, cid: str, limit: int, before: int | None = None) -> Any:
        calls.append((limit, before, threading.current_thread() is threading.main_thread()))
        return page(directory, cid, limit, before)

    monkeypatch.setattr(listing, "events_page", recording)
    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 1)
        await pilot.pause(0.3)
        shown = preview_text(screen)
        assert "› message number 59" in shown
        # Pages of four, read until the pane is full, no more.
        assert calls[0] == (4, None, False)
        read = 4 * len(calls)
        assert 4 < read < 60
        assert f"↑ {60 - read} earlier events: scroll up" in shown
        assert f"› message number {60 - read}" in shown
        assert f"› message number {60 - read - 1}\n" not in shown
        assert all(limit == 4 and not on_ui for limit, _, on_ui in calls)

        scroller = screen.query_one("#preview-body")
        scroller.scroll_home(animate=False, immediate=True)  # scrolled up to the top
        await wait(pilot, lambda: len(calls) * 4 > read, what="an earlier page")
        await pilot.pause(0.2)
        assert calls[-1][1] is not None and calls[-1][1] <= 60 - read
        assert f"› message number {60 - read - 1}" in preview_text(screen)
        assert scroller.scroll_y > 0  # the lines read stay in place; the new ones are above


# --- read ahead (the picker opened from a running app) ----------------------------------------


class ReadAheadHost(Host):
    """Opens the picker as the app does: its first rows read, then the screen pushed."""

    def on_mount(self, event: events.Mount) -> None:
        import ohtui.sdk.conversation.catalog  # noqa: F401  (loaded: the picker was preloaded)

        event.prevent_default()  # not Host's push
        self.picker.read_ahead(self, lambda: self.push_screen(self.picker, self._picked))


def read_ahead_picker(conversations_dir: Path, workspace: Path) -> ReadAheadHost:
    return ReadAheadHost(PickerScreen(conversations_dir, workspace, now=lambda: NOW))


@pytest.fixture
def first_shown(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """For each picker shown, the options it holds as its first frame is about to be drawn."""
    seen: list[int] = []
    resume = PickerScreen.on_screen_resume

    def noted(self: PickerScreen, event: Any) -> None:
        first = not self._shown_before
        resume(self, event)  # puts in the rows read ahead; Screen's own handler draws, next
        if first:
            seen.append(self.option_list.option_count)

    monkeypatch.setattr(PickerScreen, "on_screen_resume", noted)
    return seen


async def test_read_ahead_the_picker_s_first_frame_has_its_rows(
    save: Saver,
    conversations_dir: Path,
    project: Path,
    wait: Any,
    first_shown: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opened from the app: the rows are read before the screen shows, so its opening frame
    has them (no "Loading" frame, no second read), and the app draws again afterwards."""
    monkeypatch.setattr(picker_module, "READ_AHEAD_WAIT", 30.0)  # however slow this machine
    for n in range(3):
        save(project, [(f"Task {n}", "Done.")], ago=DAY * (n + 1), title=f"Task {n}")
    reloads: list[bool] = []
    reload = PickerScreen._reload
    monkeypatch.setattr(
        PickerScreen, "_reload", lambda self, *a, **k: reloads.append(True) or reload(self, *a, **k)
    )
    app = read_ahead_picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: app.picker.is_mounted and bool(preview_text(app.picker)))
        assert first_shown == [3]  # the three rows
        assert reloads == []
        assert [t.split(" | ")[0] for t in row_texts(app.picker)] == ["Task 0", "Task 1", "Task 2"]
        assert app._batch_count == 0  # drawing again (held while the rows were read)
        await type_text(pilot, "Task 2")
        await wait(pilot, lambda: len(app.picker.rows) == 1, what="the search's one row")
        await pilot.press("enter")
        await wait(pilot, lambda: app.result != UNSET, what="the picker to close")
        assert app.result == app.picker.rows[0].id


async def test_read_ahead_too_slow_the_picker_shows_without_it_and_reads_as_ever(
    save: Saver,
    conversations_dir: Path,
    project: Path,
    wait: Any,
    first_shown: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A read that takes longer than READ_AHEAD_WAIT (a busy disk): the screen shows
    without it, reads its rows as it always did, and the late page is never shown."""
    save(project, [("Port the CLI", "Done.")], ago=DAY, title="Port the CLI")
    release = threading.Event()
    calls: list[int] = []
    first_page = RowsReader.first_page

    def slow_first(self: RowsReader, generation: int, *args: Any) -> None:
        calls.append(generation)
        if len(calls) == 1:
            assert release.wait(10)
        first_page(self, generation, *args)

    monkeypatch.setattr(RowsReader, "first_page", slow_first)
    app = read_ahead_picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: app.screen is app.picker and bool(app.picker.rows))
        assert first_shown == [0]  # "Loading conversations…" until its own read
        assert app._batch_count == 0
        release.set()
        await wait(pilot, lambda: len(calls) == 2 and not app.picker.pending)
        await pilot.pause(0.1)
        assert calls == [1, 2]  # the read ahead's listing is stale: never applied
        assert [t.split(" | ")[0] for t in row_texts(app.picker)] == ["Port the CLI"]


async def test_a_failed_read_ahead_shows_the_picker_at_once_which_says_what_failed(
    conversations_dir: Path,
    project: Path,
    wait: Any,
    first_shown: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def locked(self: RowsReader, *args: Any) -> None:
        raise TimeoutError("The conversations database is locked by another program.")

    monkeypatch.setattr(RowsReader, "first_page", locked)
    app = read_ahead_picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: bool(app.notes), what="the error")
        assert app.screen is app.picker
        assert first_shown == [0]
        assert app.notes == ["The conversations database is locked by another program."]
        assert "cannot be read right now" in text(app, "#empty")
        assert app._batch_count == 0


async def test_an_app_that_ends_during_the_read_ahead_ends_quietly(
    save: Saver, conversations_dir: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quit while the rows are read: the reading thread finds no app to hand them to and
    ends without a word (a traceback would land on the terminal)."""
    save(project, [("Port the CLI", "Done.")], ago=DAY, title="Port the CLI")
    monkeypatch.setattr(picker_module, "READ_AHEAD_WAIT", 30.0)
    release = threading.Event()
    first_page = RowsReader.first_page

    def held_first(self: RowsReader, *args: Any) -> None:
        assert release.wait(10)
        first_page(self, *args)

    monkeypatch.setattr(RowsReader, "first_page", held_first)
    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    app = read_ahead_picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.screen is not app.picker  # still reading
    release.set()
    readers = [t for t in threading.enumerate() if t.name == "ohtui-picker-rows"]
    for thread in readers:  # the app's loop (the test's) runs meanwhile
        await asyncio.to_thread(thread.join, 10)
    assert readers and not any(t.is_alive() for t in readers)
    assert failures == []
