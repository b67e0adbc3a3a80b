"""Helpers shared by the chat tests: reading the real app's state and screen, sending text."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from textual.content import Content
from textual.css.query import NoMatches
from textual.pilot import Pilot
from textual.widgets import Static

from ohtui.settings.schema import KNOWN_TOOLS
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import ActionCell, AgentCell, Cell, UserCell

USAGE = {"prompt_tokens": 1200, "completion_tokens": 40}
"""Scripted on every reply: the status bar shows the context used, so it must not vary."""
SIZE = (100, 30)

C = TypeVar("C", bound=Cell)


def chat_ready(app: OhtuiApp) -> bool:
    """The chat screen is mounted and its conversation has opened (or failed to)."""
    chat = app.chat
    if chat is None or not chat.is_mounted:
        return False
    try:
        return chat.status_bar.status != "opening"
    except NoMatches:
        return False


def status(app: OhtuiApp) -> str:
    """The run status the status bar shows ("" before the chat screen is up)."""
    chat = app.chat
    if chat is None or not chat.is_mounted:
        return ""
    try:
        return chat.status_bar.status
    except NoMatches:
        return ""


def run_over(app: OhtuiApp) -> bool:
    """The run has ended and the chat took it in: its footer offers Esc as Rewind. The status
    bar says "finished" a little earlier, while the run winds up (Esc is Pause until then), so
    a test that goes on from an idle chat, or a snapshot of one, waits for this too."""
    chat = app.chat
    if chat is None or not chat.is_mounted:
        return False
    return any(getattr(key, "action", None) == "rewind_key" for key in chat.query("FooterKey"))


def cells(app: OhtuiApp, kind: type[C] = Cell) -> list[C]:  # type: ignore[assignment]
    """The mounted cells of a kind, top to bottom."""
    assert app.chat is not None
    return [c for c in app.chat.view.children if isinstance(c, kind)]


def cell_text(cell: Cell) -> str:
    """A cell's text as it renders (Markdown cells: their source text)."""
    if isinstance(cell, AgentCell):
        return cell.text
    rendered = cell.render()
    return rendered.plain if isinstance(rendered, Content) else str(rendered)


def action_cells(app: OhtuiApp, tool: str | None = None) -> list[ActionCell]:
    """The action cells, optionally of one tool."""
    return [c for c in cells(app, ActionCell) if tool is None or c.action_event.tool_name == tool]


def user_texts(app: OhtuiApp) -> list[str]:
    """The texts of the user cells, top to bottom."""
    return [c.text for c in cells(app, UserCell)]


def static_text(app: OhtuiApp, selector: str) -> str:
    """The plain text of a Static on the active screen."""
    widget = app.screen.query_one(selector, Static)
    content = widget.render()
    return content.plain if isinstance(content, Content) else str(content)


_TEXT = re.compile(
    r'<text [^>]*?x="([\d.]+)"[^>]*?clip-path="url\(#[^"]*?-line-(\d+)\)"[^>]*>(.*?)</text>'
)
_CELL_WIDTH = 12.2  # the width of one terminal cell in Rich's SVG export


def screen_text(app: OhtuiApp) -> str:
    """What the terminal shows, as plain text lines (read back from an SVG screenshot)."""
    width, height = app.size
    rows = [[" "] * width for _ in range(height)]
    for x, line, text in _TEXT.findall(app.export_screenshot()):
        row = int(line)
        column = round(float(x) / _CELL_WIDTH)
        for offset, char in enumerate(html.unescape(text).replace("\xa0", " ")):
            if row < height and column + offset < width:
                rows[row][column + offset] = char
    return "\n".join("".join(row).rstrip() for row in rows)


def user_message_texts(request: dict[str, Any]) -> list[str]:
    """The user messages' text in one chat-completions request body."""
    texts = []
    for message in request["messages"]:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.append("".join(part.get("text", "") for part in content or []))
    return texts


def tool_message_texts(request: dict[str, Any]) -> list[str]:
    """The tool results' text in one chat-completions request body."""
    texts = []
    for message in request["messages"]:
        if message.get("role") != "tool":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.append("".join(part.get("text", "") for part in content or []))
    return texts


async def type_text(pilot: Pilot[Any], text: str) -> None:
    """Type text one key per character (spaces as the space key)."""
    await pilot.press(*[("space" if ch == " " else ch) for ch in text])


async def send(pilot: Pilot[Any], text: str) -> None:
    """Type a message in the composer and press Enter."""
    await type_text(pilot, text)
    await pilot.press("enter")


def joined(lines: Iterable[str]) -> str:
    """Lines as one string (for `in` checks across wrapped lines)."""
    return " ".join(" ".join(lines).split())


async def submit(pilot: Pilot[Any], text: str) -> None:
    """Put text in the composer at once (no typing delay) and press Enter."""
    from ohtui.tui.widgets.composer import Composer

    app = pilot.app
    assert isinstance(app, OhtuiApp) and app.chat is not None
    app.chat.query_one(Composer).text = text
    await pilot.press("enter")


def save_long_conversation(
    options: AppOptions,
    turns: int,
    *,
    question: str = "question {i}",
    output: str | Callable[[int], str] = "step {i}\n[exit code 0]",
    answer: str = "answer {i}",
) -> str:
    """Save a conversation of 2 + 4 * turns events with the engine (a question, a command and
        its output, an answer per turn; "{i}" in the texts is the turn's number, or `output` gives
    the turn's output itself); returns its id."""
    from ohtui.sdk import (
        LLM,
        ActionEvent,
        Agent,
        LocalConversation,
        Message,
        MessageEvent,
        MessageToolCall,
        ObservationEvent,
        TextContent,
        Tool,
    )
    from ohtui.sdk.tools.terminal.schema import TerminalAction, TerminalObservation

    llm = LLM(
        model="openai/test-model", base_url=options.base_url, api_key="sk-test", usage_id="agent"
    )
    agent = Agent(llm=llm, tools=[Tool(name=name) for name in KNOWN_TOOLS])
    conversation = LocalConversation(
        agent=agent,
        workspace=options.workspace,
        persistence_dir=options.persistence_dir,
        visualizer=None,
    )
    conversation.send_message("a long session")  # the system prompt and this message
    append = conversation.state.append_event  # on the branch: HEAD moves with each event
    for i in range(turns):
        append(
            MessageEvent(
                source="user",
                llm_message=Message(
                    role="user", content=[TextContent(text=question.replace("{i}", str(i)))]
                ),
            )
        )
        command = f"echo step {i}"
        call = MessageToolCall(
            id=f"call_{i}", name="terminal", arguments=json.dumps({"command": command})
        )
        action = ActionEvent(
            action=TerminalAction(command=command),
            tool_name="terminal",
            tool_call_id=call.id,
            tool_call=call,
            llm_response_id=f"act-{i}",
        )
        append(action)
        append(
            ObservationEvent(
                observation=TerminalObservation.from_text(
                    output(i) if callable(output) else output.replace("{i}", str(i)),
                    command=command,
                    exit_code=0,
                ),
                action_id=action.id,
                tool_name="terminal",
                tool_call_id=call.id,
            )
        )
        append(
            MessageEvent(
                source="agent",
                llm_message=Message(
                    role="assistant", content=[TextContent(text=answer.replace("{i}", str(i)))]
                ),
                llm_response_id=f"msg-{i}",
            )
        )
    conversation_id = conversation.id.hex
    conversation.close()
    return conversation_id


def without_condenser(options: AppOptions) -> None:
    """Turn condensation off in `options`' config file: a test of the view's window must not
    have the default condenser summarize a long history first (it takes a scripted reply)."""
    assert options.config_file is not None
    with options.config_file.open("a", encoding="utf-8") as file:
        file.write('[context]\nstrategy = "none"\n')
