"""The app on a real `ohtui serve` (a subprocess, real sockets): what it shows is what the
server has. The policy in the status bar and the approval dialog, the risk's reason, the
sandbox badge, the resume hint, and the status after a reconnect."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, chat_ready, send, static_text, status
from llm_server import Reply, ScriptedLLMServer
from server.server_process import TEST_KEY, ServerProcess
from server.tcp_proxy import TCPProxy

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen

pytestmark = pytest.mark.anyio
RISKY = ConfirmationPolicy.RISKY.label


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServerProcess]:
    data = tmp_path / "serve-data"
    data.mkdir()
    process = ServerProcess(data).start()
    try:
        yield process
    finally:
        process.stop()


def on(options: AppOptions, url: str, **changes: Any) -> AppOptions:
    """The options with the conversation on the server at `url`."""
    environ = {"OHTUI_SERVER_API_KEY": TEST_KEY}
    return replace(options, server=url, environ=environ, conversation_id=None, **changes)


def bar(app: OhtuiApp) -> str:
    assert app.chat is not None
    return app.chat.status_bar.render().plain


def info(serve: ServerProcess, conversation_id: str) -> dict[str, Any]:
    with serve.client() as client:
        return dict(client.get(f"/api/conversations/{conversation_id}").json())


def sandbox_badge(reported: dict[str, Any]) -> str:
    """What the status bar says for the sandbox the server reports."""
    mode = reported["mode"]
    return "no sandbox" if mode == "off" else f"sandbox: {mode}"


async def wait_for_approval(app: OhtuiApp, pilot: Any, wait: Any) -> ApprovalScreen:
    await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
    screen = app.screen
    assert isinstance(screen, ApprovalScreen)
    return screen


async def test_the_policy_the_reason_the_sandbox_and_the_hint_are_the_servers(
    app_options: AppOptions, llm_server: ScriptedLLMServer, serve: ServerProcess, wait: Any
) -> None:
    project = app_options.workspace
    llm_server.reply_tool_call(
        "terminal", {"command": "git push --force origin main", "security_risk": "MEDIUM"}
    )
    app = OhtuiApp(on(app_options, serve.url))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await send(pilot, "publish it")
        await wait_for_approval(app, pilot, wait)
        assert static_text(app, "#policy") == f"policy: {RISKY}"
        reason = static_text(app, "#detail-reason")
        assert "(rule force-push)" in reason, reason  # as a local conversation says it
        await pilot.press("escape")  # later
        await pilot.pause()
        assert RISKY in bar(app)
        assert f"⇄ 127.0.0.1:{serve.port}" in bar(app)
        conversation_id = app.chat.session.conversation_id if app.chat else None
        assert conversation_id is not None
        reported = info(serve, conversation_id)
        assert reported["confirmation_policy"]["kind"] == "ConfirmRisky"
        assert sandbox_badge(reported["ohtui_sandbox"]) in bar(app)
        await pilot.press("ctrl+c", "ctrl+c")
    assert app.resume_hint is not None
    assert f"ohtui --server {serve.url} --resume {conversation_id}" in app.resume_hint

    # Resumed with the same flags: still asks for a MEDIUM action, and says so.
    junk = project / "junk"
    junk.mkdir()
    llm_server.reply_tool_call("terminal", {"command": "rm -rf junk", "security_risk": "MEDIUM"})
    again = OhtuiApp(on(app_options, serve.url, resume_id=conversation_id))
    async with again.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(again), what="the conversation to reopen")
        await wait(pilot, lambda: RISKY in bar(again), timeout=5, what="the policy shown")
        await send(pilot, "clean up")
        await wait_for_approval(again, pilot, wait)
        assert static_text(again, "#policy") == f"policy: {RISKY}"
        assert junk.exists()
        await pilot.press("escape")


async def test_the_status_follows_the_server_after_a_reconnect(
    app_options: AppOptions, llm_server: ScriptedLLMServer, serve: ServerProcess, wait: Any
) -> None:
    """The app watches a run another client started; while the link is down the server
    pauses it: once back, the status bar says paused (it kept counting "running")."""
    llm_server.reply(Reply(text="slow", delay=20))
    with serve.client() as client:
        payload = {
            "agent": {
                "kind": "Agent",
                "llm": {
                    "model": "openai/test-model",
                    "base_url": llm_server.base_url,
                    "api_key": "sk-test",
                    "num_retries": 0,
                },
                "tools": [{"name": "terminal"}],
            },
            "workspace": {"working_dir": str(app_options.workspace)},
            "autotitle": False,
        }
        conversation_id = client.post("/api/conversations", json=payload).json()["id"]
        message = {"role": "user", "content": [{"type": "text", "text": "slowly"}], "run": True}
        client.post(f"/api/conversations/{conversation_id}/events", json=message)
    with TCPProxy(serve.port) as proxy:
        app = OhtuiApp(on(app_options, proxy.url, resume_id=conversation_id))
        async with app.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
            await wait(pilot, lambda: status(app) == "running", timeout=10, what="running")
            proxy.cut()
            await wait(pilot, lambda: "reconnecting" in bar(app), timeout=10, what="the cut")
            with serve.client() as client:
                client.post(f"/api/conversations/{conversation_id}/interrupt")
            deadline = time.monotonic() + 10
            while info(serve, conversation_id)["execution_status"] != "paused":
                assert time.monotonic() < deadline
                await pilot.pause(0.05)
            proxy.restore()
            await wait(pilot, lambda: "reconnecting" not in bar(app), what="the reconnection")
            await wait(pilot, lambda: status(app) == "paused", timeout=5, what="paused")
            assert "paused" in bar(app)


async def test_a_policy_changed_by_another_client_is_shown(
    app_options: AppOptions, serve: ServerProcess, wait: Any
) -> None:
    """The status bar follows the policy in force, whoever set it."""
    app = OhtuiApp(on(app_options, serve.url))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert RISKY in bar(app)
        assert app.chat is not None
        conversation_id = app.chat.session.conversation_id
        with serve.client() as client:
            policy = {"policy": {"kind": "AlwaysConfirm"}}
            client.post(f"/api/conversations/{conversation_id}/confirmation_policy", json=policy)
        always = ConfirmationPolicy.ALWAYS.label
        await wait(pilot, lambda: always in bar(app), timeout=5, what="the new policy shown")
        await pilot.press("ctrl+c", "ctrl+c")
