"""The session's first cell says which instruction files and skills the agent got, as the
engine loaded them from real files (AGENTS.md, CLAUDE.md, project and user skills)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, USAGE, cell_text, cells, chat_ready, status, submit, user_texts
from llm_server import ScriptedLLMServer

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import Cell
from ohtui.tui.widgets.instructions_cell import InstructionsCell

SUMMARY = "Instructions: AGENTS.md, CLAUDE.md · skills: 3 (user: 2)"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home and config folder of the test's own, with two user skills in them."""
    home = tmp_path / "home"
    config = tmp_path / "ohtui-config"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OHTUI_CONFIG_DIR", str(config))
    (config / "skills").mkdir(parents=True)
    (config / "skills" / "style.md").write_text("Write short sentences.\n", encoding="utf-8")
    shared = home / ".agents" / "skills"
    shared.mkdir(parents=True)
    (shared / "tea.md").write_text(
        "---\ntriggers: [tea]\n---\nGreen, not black.\n", encoding="utf-8"
    )
    return home


@pytest.fixture
def instructed(app_options: AppOptions, home: Path) -> AppOptions:
    """A workspace with AGENTS.md, CLAUDE.md and one project skill."""
    workspace = app_options.workspace
    (workspace / "AGENTS.md").write_text("Run `make test` before a commit.\n", encoding="utf-8")
    (workspace / "CLAUDE.md").write_text("Prefer small modules.\n", encoding="utf-8")
    skills = workspace / ".agents" / "skills"
    skills.mkdir(parents=True)
    (skills / "deploy.md").write_text(
        "---\ntriggers: [deploy]\n---\nDeploy with `make ship`.\n", encoding="utf-8"
    )
    return app_options


def instruction_cells(app: OhtuiApp) -> list[InstructionsCell]:
    return cells(app, InstructionsCell)


@pytest.mark.anyio
async def test_the_first_cell_names_the_instruction_files_and_counts_the_skills(
    instructed: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("Done.", usage=USAGE)
    app = OhtuiApp(instructed)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: len(instruction_cells(app)) == 1, what="the instructions")
        (cell,) = instruction_cells(app)
        assert cell_text(cell) == SUMMARY
        assert cells(app)[0] is cell  # the first cell
        cell.focus()
        await pilot.pause()
        shown = cell_text(cell).splitlines()
        assert shown[0] == SUMMARY
        assert "  AGENTS.md" in shown and "  CLAUDE.md" in shown
        assert "  skill deploy (project): .agents/skills/deploy.md" in shown
        assert any(line.startswith("  skill tea (user): ~/.agents/skills/tea.md") for line in shown)
        assert any(line.startswith("  skill style (user): ") for line in shown)
        # What the cell says is what the agent got: the files are in its system prompt.
        await pilot.press("escape")
        await submit(pilot, "hello")
        await wait(pilot, lambda: status(app) == "finished", what="the answer")
    system = llm_server.requests[0]["messages"][0]["content"]
    text = system if isinstance(system, str) else "".join(p.get("text", "") for p in system)
    assert "make test" in text and "Prefer small modules." in text


@pytest.mark.anyio
async def test_a_resumed_conversation_says_it_again_after_its_history(
    instructed: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("First answer.", usage=USAGE)
    app = OhtuiApp(instructed)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "first")
        await wait(pilot, lambda: status(app) == "finished", what="the answer")
        assert app.chat is not None
        saved = app.chat.session.conversation_id
    assert saved is not None
    (instructed.workspace / "CLAUDE.md").unlink()  # the next opening reads what is there now
    again = OhtuiApp(replace(instructed, resume_id=saved[:8], conversation_id=None))
    async with again.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: len(instruction_cells(again)) == 1, what="the instructions")
        assert user_texts(again) == ["first"]
        (cell,) = instruction_cells(again)
        assert cell_text(cell) == "Instructions: AGENTS.md · skills: 3 (user: 2)"
        shown: list[Cell] = cells(again)
        assert shown[-1] is cell  # after the history: where this session starts


@pytest.mark.anyio
async def test_no_cell_when_the_agent_got_no_instructions(
    app_options: AppOptions, home: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    for skill in (Path(str(home)) / ".agents" / "skills").iterdir():
        skill.unlink()
    for skill in (home.parent / "ohtui-config" / "skills").iterdir():
        skill.unlink()
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await pilot.pause(0.1)
        assert instruction_cells(app) == []


def test_the_first_cell_with_instructions(instructed: AppOptions, snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        app = pilot.app
        while not instruction_cells(app):
            await pilot.pause(0.05)
        await settle(pilot)

    assert snap_compare(OhtuiApp(instructed), terminal_size=(100, 20), run_before=run_before)


async def settle(pilot: Any) -> None:
    """No notifications (they expire on timers) and no blinking cursor (its phase depends on
    timing) in a snapshot."""
    app = pilot.app
    app.clear_notifications()
    for widget in app.screen.query("TextArea, Input"):
        widget.cursor_blink = False
    await pilot.pause(0.1)
    await pilot.wait_for_scheduled_animations()
