"""The picker and the conversation tree: forks listed under their parent, a fork apart from it
naming it, the preview saying where a fork comes from and how many branches a conversation
has, and the list of branches that opens one (Pilot over conversations the real engine saved).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import test_picker
from llm_server import ScriptedLLMServer
from test_picker import DAY, HOUR, MINUTE, NOW, SIZE, Saver, listed, picker, row_texts, text
from textual.pilot import Pilot
from textual.widgets import OptionList

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation, Tool
from ohtui.sdk.conversation import LocalCatalog, list_conversations
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.picker_family import BranchesScreen, OpenBranch, family_order

pytestmark = pytest.mark.anyio

# The fixtures of test_picker.
home = test_picker.home
clock = test_picker.clock
conversations_dir = test_picker.conversations_dir
project = test_picker.project
other = test_picker.other
save = test_picker.save


def reopen(save: Saver, workspace: Path, conversation_id: str) -> LocalConversation:
    conversation = Conversation(
        agent=Agent(llm=save.llm),
        workspace=workspace,
        persistence_dir=save.conversations_dir,
        conversation_id=uuid.UUID(conversation_id),
        visualizer=None,
    )
    assert isinstance(conversation, LocalConversation)
    return conversation


def fork(
    save: Saver,
    workspace: Path,
    parent: str,
    *,
    ago: float,
    title: str,
    at_message: int | None = None,
    fork_id: str | None = None,
) -> str:
    """Fork `parent` (at its `at_message`-th user message's reply, else at HEAD) at a store
    time `ago`; returns the fork's id."""
    # The parent is opened and closed at its own time: only the fork is new.
    [before] = [s for s in list_conversations(save.conversations_dir) if s.id == parent]
    save.clock.value = before.updated_at.timestamp()
    conversation = reopen(save, workspace, parent)
    try:
        at = None
        if at_message is not None:
            events = list(conversation.state.events)
            users = [
                i for i, e in enumerate(events) if e.kind == "MessageEvent" and e.source == "user"
            ]
            at = events[users[at_message] + 1].id
        save.clock.value = NOW - ago
        made = conversation.fork(
            title=title,
            from_event_id=at,
            conversation_id=uuid.UUID(fork_id) if fork_id else None,
        )
        made.close()
        return made.id.hex
    finally:
        save.clock.value = before.updated_at.timestamp()
        conversation.close()


def branch(
    save: Saver, workspace: Path, conversation_id: str, *, at_message: int, say: str, reply: str
) -> str:
    """A new branch of a saved conversation, from the reply to its `at_message`-th user
    message; returns the new tip's id (HEAD stays there)."""
    conversation = reopen(save, workspace, conversation_id)
    try:
        events = list(conversation.state.events)
        users = [i for i, e in enumerate(events) if e.kind == "MessageEvent" and e.source == "user"]
        conversation.navigate_to(events[users[at_message] + 1].id)
        save.server.reply_text(reply)
        conversation.send_message(say)
        conversation.run()
        leaf = conversation.state.leaf_event_id
        assert leaf is not None
        return leaf
    finally:
        conversation.close()


def test_family_order_puts_forks_under_their_parents() -> None:
    from datetime import UTC, datetime

    def row(id_: str, parent: str | None = None) -> Any:
        from ohtui.sdk.conversation.summary import ConversationSummary

        moment = datetime.fromtimestamp(NOW, UTC)
        return ConversationSummary(
            id_, id_, None, moment, moment, 1, None, None, None, None, parent
        )

    rows = [row("ff", "f"), row("f", "p"), row("u"), row("g", "p"), row("p"), row("o", "gone")]
    order = [(r.id, depth) for r, depth in family_order(rows)]
    assert order == [("u", 0), ("p", 0), ("f", 1), ("ff", 2), ("g", 1), ("o", 0)]


async def test_forks_are_listed_under_their_parent_and_apart_name_it(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    parent = save(project, [("Fix the parser", "Fixed.")], ago=3 * HOUR, title="Parser")
    save(project, [("Unrelated", "Yes.")], ago=HOUR, title="Unrelated")
    child = fork(save, project, parent, ago=5 * MINUTE, title="Parser, take two")
    grandchild = fork(save, project, child, ago=2 * MINUTE, title="Take three")
    doomed = save(project, [("Old idea", "Ok.")], ago=2 * DAY, title="Old idea")
    kept = fork(save, project, doomed, ago=MINUTE, title="Brought back")

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 6)
        rows = row_texts(screen)
        assert [line.split(" | ")[0] for line in rows] == [
            "Unrelated",
            "Parser",
            "↳ Parser, take two",
            "↳ Take three",  # (indented once more: row_texts strips the margin)
            "Old idea",
            "↳ Brought back",
        ]
        assert rows[2].split(" | ")[1].startswith("5 min ago · idle")
        assert [r.id for r in screen.rows] == [
            screen.rows[0].id,
            parent,
            child,
            grandchild,
            doomed,
            kept,
        ]
        prompt = screen.option_list.get_option_at_index(3).prompt
        assert str(prompt).startswith("  ↳ Take three\n      2 min ago")

        await test_picker.type_text(pilot, "take three")  # its parent is not among the hits
        screen = await listed(pilot, wait, 1)
        assert row_texts(screen)[0].startswith("Take three | ↳ fork of Parser, take two · 2 min")

        await pilot.press("escape")
        await listed(pilot, wait, 6)
        LocalCatalog(conversations_dir).delete(doomed)
        await pilot.press("ctrl+w", "ctrl+w")  # listed again
        screen = await listed(pilot, wait, 5)
        assert row_texts(screen)[0].startswith(f"Brought back | ↳ fork of {doomed[:8]} (deleted)")


async def test_the_preview_says_where_a_fork_comes_from_and_its_branches(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    source = save(
        project,
        [("Plan the release", "Here is a plan."), ("Ship it", "Shipped.")],
        ago=HOUR,
        title="Release",
    )
    made = fork(save, project, source, ago=30 * MINUTE, title="Release, again", at_message=0)
    other_tip = branch(
        save, project, source, at_message=0, say="Wait, a hotfix first", reply="Hotfix done."
    )

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot, wait, 2)
        assert screen.highlighted is not None and screen.highlighted.id == source  # newest
        await wait(pilot, lambda: "branches" in text(app, "#preview-events"), what="the tree")
        shown = text(app, "#preview-events")
        assert shown.splitlines()[0] == (
            "branches  2 · active: Wait, a hotfix first · ctrl+t lists them"
        )
        assert "ctrl+t branches" in text(app, "#legend")

        await pilot.press("down")
        await wait(pilot, lambda: "fork of" in text(app, "#preview-events"), what="the fork")
        assert (
            text(app, "#preview-events")
            .splitlines()[0]
            .startswith("fork of   Release at its event of ")
        )
        assert "branches" not in text(app, "#legend")
        assert screen.highlighted is not None and screen.highlighted.id == made
        assert other_tip


async def test_ctrl_t_lists_the_branches_and_enter_opens_one(
    save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    source = save(
        project,
        [("Plan the release", "Here is a plan."), ("Ship it", "Shipped.")],
        ago=HOUR,
        title="Release",
    )
    catalog = LocalCatalog(conversations_dir)
    first_tip = catalog.tree(source, None).tips[0].leaf_event_id
    new_tip = branch(
        save, project, source, at_message=0, say="Wait, a hotfix first", reply="Hotfix done."
    )

    app = picker(conversations_dir, project)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, wait, 1)
        await wait(pilot, lambda: "ctrl+t" in text(app, "#legend"), what="the branches")
        await pilot.press("ctrl+t")
        await wait(pilot, lambda: isinstance(app.screen, BranchesScreen), what="the list")
        options = app.screen.query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [o.id for o in options._options] == [new_tip, first_tip]
        assert prompts[0].startswith("↳ Wait, a hotfix first\n  ● active · ")
        assert prompts[1].startswith("↳ Ship it\n  ")
        assert options.highlighted == 0  # the active one

        await pilot.press("escape")  # back to the picker, nothing chosen
        await wait(pilot, lambda: not isinstance(app.screen, BranchesScreen), what="the picker")
        assert app.result == test_picker.UNSET

        await pilot.press("ctrl+t")
        await wait(pilot, lambda: isinstance(app.screen, BranchesScreen), what="the list")
        await pilot.press("down", "enter")
        await wait(pilot, lambda: app.result != test_picker.UNSET, what="the choice")
        assert app.result == OpenBranch(source, first_tip)


def test_snapshot_forks_under_their_parent(
    snap_compare: Any, save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    parent = save(
        project,
        [("The tokenizer drops the last token of every line.", "Fixed, with a test.")],
        ago=3 * HOUR,
        title="Fix the tokenizer",
        conversation_id="0123456789abcdef0123456789abcdef",
    )
    save(
        project,
        [("Write a README with install steps", "Here is a draft.")],
        ago=HOUR,
        title="Write the README",
        conversation_id="1111111111111111aaaaaaaaaaaaaaaa",
    )
    child = fork(
        save,
        project,
        parent,
        ago=10 * MINUTE,
        title="Fix the tokenizer, the other way",
        fork_id="2222222222222222bbbbbbbbbbbbbbbb",
    )
    fork(
        save,
        project,
        child,
        ago=2 * MINUTE,
        title="Try a regex",
        fork_id="3333333333333333cccccccccccccccc",
    )
    app = picker(conversations_dir, project)

    async def ready(pilot: Pilot[None]) -> None:
        await listed(pilot, wait, 4)
        await pilot.press("down", "down")  # the fork: where it comes from, in the preview
        await wait(pilot, lambda: "fork of" in text(app, "#preview-events"), what="the fork")
        app.picker.search_input.cursor_blink = False
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_snapshot_the_branches_of_a_conversation(
    snap_compare: Any, save: Saver, conversations_dir: Path, project: Path, wait: Any
) -> None:
    source = save(
        project,
        [("Plan the release", "Here is a plan."), ("Ship it", "Shipped.")],
        ago=HOUR,
        title="Release",
        conversation_id="0123456789abcdef0123456789abcdef",
    )
    branch(save, project, source, at_message=0, say="Wait, a hotfix first", reply="Hotfix done.")
    branch(save, project, source, at_message=0, say="Write the notes", reply="Notes written.")
    app = picker(conversations_dir, project)

    async def ready(pilot: Pilot[None]) -> None:
        await listed(pilot, wait, 1)
        await wait(pilot, lambda: "ctrl+t" in text(app, "#legend"), what="the branches")
        await pilot.press("ctrl+t")
        await wait(pilot, lambda: isinstance(app.screen, BranchesScreen), what="the list")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


async def test_a_branch_chosen_in_the_picker_opens_with_head_moved_there(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """Through the app's own opening: the picker's choice, the session, navigate_to; the
    next message goes on from that branch."""
    from chat_helpers import USAGE, chat_ready, status, submit
    from test_resume import picker_listed
    from test_resume import save as save_in

    conversation_id = save_in(app_options, llm_server, ["alpha one", "alpha two"])
    catalog = LocalCatalog(app_options.persistence_dir or "")
    two_tip = catalog.tree(conversation_id, None).tips[0].leaf_event_id
    llm = LLM(model="openai/test-model", base_url=llm_server.base_url, api_key="sk-test")
    conversation = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=app_options.workspace,
        persistence_dir=app_options.persistence_dir,
        conversation_id=uuid.UUID(conversation_id),
        visualizer=None,
    )
    events = list(conversation.state.events)
    one = next(e for e in events if e.kind == "MessageEvent" and "alpha one" in e.text)
    conversation.navigate_to(events[events.index(one) + 1].id)
    llm_server.reply_text("Answer to alpha three.", usage=USAGE)
    conversation.send_message("alpha three")
    conversation.run()
    conversation.close()

    app = OhtuiApp(replace(app_options, pick=True, conversation_id=None))
    async with app.run_test(size=SIZE) as pilot:
        await picker_listed(pilot, wait, 1)
        await wait(pilot, lambda: "ctrl+t" in text(app, "#legend"), what="the branches")
        await pilot.press("ctrl+t")
        await wait(pilot, lambda: isinstance(app.screen, BranchesScreen), what="the list")
        await pilot.press("down", "enter")  # "alpha two", the older branch
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        session = app.chat.session if app.chat is not None else None
        assert session is not None and session.conversation_id == conversation_id
        opened = session.conversation
        assert opened is not None and opened.state.leaf_event_id == two_tip
        llm_server.reply_text("Answer to alpha four.", usage=USAGE)
        await submit(pilot, "alpha four")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
    said = json.dumps(llm_server.requests[-1]["messages"])
    assert "alpha two" in said and "alpha four" in said and "alpha three" not in said
    assert len(catalog.tree(conversation_id, None).tips) == 2  # alpha three's kept
