"""AsyncCallbackWrapper: a conversation run on a worker thread hands its events to a
coroutine on the caller's asyncio loop (the SDK's 11_async example)."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation, MessageEvent
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.user_action import PauseEvent
from ohtui.sdk.utils.async_utils import AsyncCallbackWrapper


def test_a_run_on_a_worker_thread_reaches_a_coroutine_on_the_loop(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    llm_server.reply_text("Hello from the model.")
    seen: list[tuple[str, bool]] = []

    async def on_event(event: Event) -> None:
        loop_thread = threading.current_thread() is threading.main_thread()
        seen.append((type(event).__name__, loop_thread))

    def run(callback: AsyncCallbackWrapper) -> list[str]:
        with Conversation(
            agent=Agent(llm=llm, tools=[]), workspace=workspace, callbacks=[callback]
        ) as conversation:
            conversation.send_message("hi")
            conversation.run()
            callback.wait_for_pending(timeout=5)
            return [type(e).__name__ for e in conversation.state.events]

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        callback = AsyncCallbackWrapper(on_event, loop)
        return await loop.run_in_executor(None, run, callback)

    logged = asyncio.run(main())
    delivered = [name for name, _ in seen if name != "ConversationStateUpdateEvent"]
    assert delivered == logged  # every event, in order
    assert MessageEvent.__name__ in delivered
    assert all(on_loop for _, on_loop in seen)  # run on the loop's thread, not the worker's


def test_a_failing_coroutine_is_logged_and_a_stopped_loop_drops_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(event: Event) -> None:
        raise RuntimeError("coroutine broke")

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        callback = AsyncCallbackWrapper(broken, loop)
        with caplog.at_level(logging.WARNING):
            callback(PauseEvent())
            callback.wait_for_pending(timeout=5)
        assert any(
            r.exc_info is not None and "coroutine broke" in str(r.exc_info[1])
            for r in caplog.records
        )
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        AsyncCallbackWrapper(broken, loop)(PauseEvent())
    assert any("not running" in r.getMessage() for r in caplog.records)
    loop.close()
