"""The app on the real OpenHands agent server (opt-in: `peer`, OHTUI_PEER_PYTHON): the policy
the app shows is the one the server has, both ways; the risk's reason and the sandbox are
told as far as that server tells them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from chat_helpers import SIZE, chat_ready, send, static_text
from llm_server import ScriptedLLMServer
from peer_agent_server import PEER_ENV, PeerServer, peer_agent_server

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen

PEER = os.environ.get(PEER_ENV)
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.peer,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not PEER, reason=f"needs {PEER_ENV}"),
]


@pytest.fixture
def peer() -> Iterator[PeerServer]:
    assert PEER is not None
    with peer_agent_server(PEER) as server:
        yield server


def bar(app: OhtuiApp) -> str:
    assert app.chat is not None
    return app.chat.status_bar.render().plain


def reported_policy(peer: PeerServer, conversation_id: str) -> str:
    url = f"{peer.url}/api/conversations/{conversation_id}"
    headers = {"X-Session-API-Key": peer.api_key}
    return str(httpx.get(url, headers=headers, timeout=30).json()["confirmation_policy"]["kind"])


async def test_the_policy_shown_is_the_servers_both_ways(
    app_options: AppOptions, llm_server: ScriptedLLMServer, peer: PeerServer, wait: Any
) -> None:
    junk = peer.workspace / "junk"
    junk.mkdir()
    llm_server.reply_tool_call("terminal", {"command": "rm -rf junk", "security_risk": "MEDIUM"})
    options = replace(
        app_options,
        workspace=peer.workspace,
        server=peer.url,
        environ={"OHTUI_SERVER_API_KEY": peer.api_key},
        conversation_id=None,
    )
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), timeout=60, what="the conversation to open")
        assert "sandbox unknown" in bar(app)  # the OpenHands server does not say
        await send(pilot, "clean up")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        assert static_text(app, "#policy") == f"policy: {ConfirmationPolicy.RISKY.label}"
        assert static_text(app, "#detail-reason") == "the model: rated MEDIUM"
        assert junk.exists()
        await pilot.press("escape")  # later
        await pilot.pause()
        assert app.chat is not None
        conversation_id = app.chat.session.conversation_id
        assert conversation_id is not None
        assert reported_policy(peer, conversation_id) == "ConfirmRisky"
        await pilot.press("shift+tab")  # risky -> never: the server takes it (no rules there)
        never = ConfirmationPolicy.NEVER.label
        await wait(
            pilot,
            lambda: reported_policy(peer, conversation_id) == "NeverConfirm",
            timeout=10,
            what="the server to have the new policy",
        )
        await pilot.pause(0.2)
        assert never in bar(app)
