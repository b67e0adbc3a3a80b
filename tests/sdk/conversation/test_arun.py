"""LocalConversation.arun: the run awaited on an asyncio loop that stays free, interrupted at
once by `interrupt()` or by cancelling the awaiting task (the SDK's 50_async_cancellation).

Real runs against the scripted LLM server, a real shell for the long command.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    Conversation,
    ConversationExecutionStatus,
    ConversationRunError,
    LocalConversation,
    ObservationEvent,
    Tool,
)
from ohtui.sdk.event.user_action import InterruptEvent, PauseEvent

Status = ConversationExecutionStatus


def _conversation(llm: LLM, workspace: Path) -> LocalConversation:
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    conversation = Conversation(agent=agent, workspace=workspace, visualizer=None)
    assert isinstance(conversation, LocalConversation)
    return conversation


def _kinds(conversation: LocalConversation) -> list[type]:
    return [type(e) for e in conversation.state.events]


def test_arun_runs_to_the_end_while_the_loop_stays_free(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    llm_server.reply_text("Thinking done.", delay=0.5)
    ticks: list[float] = []

    async def main(conversation: LocalConversation) -> None:
        async def tick() -> None:
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.05)

        ticker = asyncio.create_task(tick())
        await conversation.arun()
        ticker.cancel()

    with _conversation(llm, workspace) as conversation:
        conversation.send_message("hi")
        asyncio.run(main(conversation))
        assert conversation.state.execution_status is Status.FINISHED
    assert len(ticks) >= 5  # the loop ran other work during the half-second LLM call


def test_interrupt_from_the_loop_stops_a_slow_llm_call_at_once(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    llm_server.reply_text("too late", delay=5)

    async def main(conversation: LocalConversation) -> float:
        loop = asyncio.get_running_loop()
        loop.call_later(0.3, conversation.interrupt)
        started = time.monotonic()
        await conversation.arun()
        return time.monotonic() - started

    with _conversation(llm, workspace) as conversation:
        conversation.send_message("hi")
        took = asyncio.run(main(conversation))
        assert took < 3
        assert conversation.state.execution_status is Status.PAUSED
        assert _kinds(conversation).count(InterruptEvent) == 1
        assert PauseEvent not in _kinds(conversation)

        llm_server.reply_text("Resumed and done.")
        asyncio.run(conversation.arun())  # resumable
        assert conversation.state.execution_status is Status.FINISHED


def test_cancelling_the_task_interrupts_a_running_command_and_returns_normally(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "sleep 30"})

    async def main(conversation: LocalConversation) -> float:
        task = asyncio.create_task(conversation.arun())
        deadline = time.monotonic() + 10
        while ActionEvent not in _kinds(conversation) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # the command is running by now
        started = time.monotonic()
        task.cancel()
        await task  # absorbed, as in the SDK: no CancelledError
        assert not task.cancelled()
        return time.monotonic() - started

    with _conversation(llm, workspace) as conversation:
        conversation.send_message("count down")
        took = asyncio.run(main(conversation))
        assert took < 10  # not the 30 s of the command
        assert conversation.state.execution_status is Status.PAUSED
        assert InterruptEvent in _kinds(conversation)
        # The killed command still answered its call: the history stays well-formed.
        assert ObservationEvent in _kinds(conversation) or any(
            e.kind == "AgentErrorEvent" for e in conversation.state.events
        )


def test_a_failing_run_raises_from_arun(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    llm_server.reply_error(401)
    with _conversation(llm, workspace) as conversation:
        conversation.send_message("hi")
        with pytest.raises(ConversationRunError):
            asyncio.run(conversation.arun())
        assert conversation.state.execution_status is Status.ERROR
