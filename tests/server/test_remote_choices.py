"""A conversation keeps what the user chose wherever it runs: here, on `ohtui serve`, or on
the OpenHands agent server (the `peer` cells: opt-in, OHTUI_PEER_PYTHON).

Every test opens conversations as the TUI and headless runs do (`opening.start`, with a
profile like the user's), new, resumed, and resumed after the server restarted.

- The confirmation policy: policy (always, risky, never) x where x when. The agent runs a
  MEDIUM action (`rm -rf junk`): it must wait for approval exactly when the policy asks for
  MEDIUM risk (always, risky); the policy the UI shows (`ConfirmationPolicy.from_engine` of
  the conversation's state) and the one the server reports (its ConversationInfo) must be
  that same policy. A resume runs with a config whose default policy differs, as a user's
  would after switching in the session: the conversation's saved policy wins, unless
  `--confirm` chose one now.
- The model: a resume with `--model`/`--base-url` thinks with them, also once the old
  address is gone, as a local `--continue` does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_server import ScriptedLLMServer
from peer_agent_server import PEER_ENV, peer_agent_server
from server_process import TEST_KEY, ServerProcess

from ohtui.opening import Started, Target, start
from ohtui.sdk import ConversationExecutionStatus, MessageEvent, RemoteConversation
from ohtui.settings.choices import ConfirmationPolicy
from ohtui.settings.overrides import Override
from ohtui.settings.profile import Profile

Status = ConversationExecutionStatus
PEER = os.environ.get(PEER_ENV)
POLICIES = ("always", "risky", "never")
ASKS_FOR_MEDIUM = {"always": True, "risky": True, "never": False}
WIRE_KIND = {"always": "AlwaysConfirm", "risky": "ConfirmRisky", "never": "NeverConfirm"}
OTHER = {"always": "never", "risky": "always", "never": "risky"}
"""A config default unlike the conversation's policy, for the resumes."""


@dataclass
class Where:
    """Where conversations run: a server URL and key (None: here), how to restart it."""

    name: str
    url: str | None
    key: str | None
    workspace: Path
    data: Path
    restart: Callable[[], None] | None

    def info(self, conversation_id: object) -> dict[str, Any]:
        """The server's ConversationInfo of a conversation."""
        assert self.url is not None
        headers = {"X-Session-API-Key": self.key} if self.key else {}
        url = f"{self.url}/api/conversations/{conversation_id}"
        return dict(httpx.get(url, headers=headers, timeout=30).json())


def profile(
    where: Where,
    llm: ScriptedLLMServer,
    policy: str = "risky",
    *,
    chosen: bool = False,
    model: str | None = None,
) -> Profile:
    """The user's settings: the scripted model, `policy` as the config's default (`chosen`:
    given with --confirm instead), the server, if any; `model`: given with --model and
    `llm` with --base-url."""
    home = where.data / f"config-{policy}-{chosen}-{model}"
    home.mkdir(parents=True, exist_ok=True)
    text = '[llm]\nmodel = "openai/test-model"\nnum_retries = 0\n'
    if model is None:
        text += f'base_url = "{llm.base_url}"\n'
    text += f'[confirmation]\npolicy = "{"risky" if chosen else policy}"\n'
    if where.url:
        text += f'[server]\nurl = "{where.url}"\n'
    (home / "config.toml").write_text(text, encoding="utf-8")
    overrides = {}
    if chosen:
        overrides[("confirmation", "policy")] = Override(policy, "--confirm")
    if model is not None:
        overrides[("llm", "model")] = Override(model, "--model")
        overrides[("llm", "base_url")] = Override(llm.base_url, "--base-url")
    environ = {"OHTUI_SERVER_API_KEY": where.key} if where.key else {}
    return Profile(home / "config.toml", overrides, use_keyring=False, environ=environ).load()


def open_in(where: Where, profile: Profile, target: Target | None = None) -> Started:
    return start(profile, where.workspace, where.data / "conversations", target or Target())


# --- where ---------------------------------------------------------------------------------


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_keyring: None) -> Path:
    """No user setting leaks in: the environment's ohtui variables are cleared."""
    for name in list(os.environ):
        if name.startswith("OHTUI_") and not name.startswith(("OHTUI_REQUIRE_", "OHTUI_PEER_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OHTUI_CONFIG_DIR", str(tmp_path / "ohtui-config"))
    monkeypatch.setenv("OHTUI_DATA_DIR", str(tmp_path / "ohtui-data"))
    workspace = tmp_path / "project"
    workspace.mkdir()
    return workspace


@pytest.fixture
def here(isolated: Path, tmp_path: Path) -> Where:
    """Conversations run in this process (a "restart" opens them from the store again)."""
    return Where("here", None, None, isolated, tmp_path / "local", None)


@pytest.fixture
def serve(isolated: Path, tmp_path: Path) -> Iterator[Where]:
    """`ohtui serve` in a subprocess, restartable on its port with its data."""
    data = tmp_path / "serve-data"
    data.mkdir()
    processes = [ServerProcess(data).start()]
    first = processes[0]

    def restart() -> None:
        processes[-1].stop()
        processes.append(ServerProcess(data, port=first.port).start())

    try:
        yield Where("ohtui serve", first.url, TEST_KEY, isolated, tmp_path / "client", restart)
    finally:
        processes[-1].stop()


@pytest.fixture
def openhands(isolated: Path, tmp_path: Path) -> Iterator[Where]:
    """The real OpenHands agent server (the peer venv), restartable."""
    assert PEER is not None
    with peer_agent_server(PEER) as peer:
        client = tmp_path / "client"
        yield Where("OpenHands", peer.url, peer.api_key, peer.workspace, client, peer.restart)


peer_only = [
    pytest.mark.peer,
    pytest.mark.timeout(900),  # the peer starts twice: 20 s each, minutes on a loaded machine
    pytest.mark.skipif(not PEER, reason=f"needs {PEER_ENV}"),
]
EVERYWHERE = ["here", "serve", pytest.param("openhands", marks=peer_only)]


@pytest.fixture(params=EVERYWHERE)
def where(request: pytest.FixtureRequest) -> Where:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


# --- the confirmation policy ---------------------------------------------------------------


def medium_action_asks(started: Started, llm: ScriptedLLMServer, workspace: Path) -> bool:
    """Have the agent run `rm -rf junk` (MEDIUM); whether it waited for approval. A waiting
    action is rejected, so the conversation ends each cell finished."""
    conversation = started.conversation
    junk = workspace / "junk"
    junk.mkdir(exist_ok=True)
    llm.reply_tool_call("terminal", {"command": "rm -rf junk", "security_risk": "MEDIUM"})
    llm.reply_text("Cleaned up.")
    conversation.send_message("clean up the junk folder")
    conversation.run()
    status = conversation.state.execution_status
    if status is Status.WAITING_FOR_CONFIRMATION:
        pending = conversation.state.get_unmatched_actions(conversation.state.events)
        # MEDIUM; HIGH only when the pattern analyzer ran out of its parse budget (30 ms,
        # counted from before its parser loads: a loaded machine's first command).
        risks = [a.security_risk.value for a in pending]
        assert risks in (["MEDIUM"], ["HIGH"]), [a.security_risk_reason for a in pending]
        conversation.reject_pending_actions("not now")
        conversation.run()
        assert junk.exists()
        assert conversation.state.execution_status is Status.FINISHED
        return True
    assert status is Status.FINISHED, status
    assert not junk.exists()
    return False


def check_cell(
    where: Where, started: Started, llm: ScriptedLLMServer, policy: str, cell: str
) -> None:
    """The policy in force, the one shown and the one reported are `policy`."""
    conversation = started.conversation
    label = f"{where.name}/{cell}/{policy}"
    assert isinstance(conversation, RemoteConversation) == (where.url is not None)
    for moment in ("before", "after"):
        assert ConfirmationPolicy.from_engine(conversation.state.confirmation_policy) == policy, (
            f"{label}: shown"
        )
        if where.url is not None:
            reported = where.info(conversation.id)["confirmation_policy"]["kind"]
            assert reported == WIRE_KIND[policy], f"{label}: reported {moment}"
        if moment == "before":
            asks = medium_action_asks(started, llm, where.workspace)
            assert asks is ASKS_FOR_MEDIUM[policy], f"{label}: asked {asks}"


def test_a_medium_action_asks_exactly_when_the_policy_says(
    where: Where, llm_server: ScriptedLLMServer
) -> None:
    ids: dict[str, str] = {}

    def cell(name: str, policy: str, config: str, resume: str | None, **kw: Any) -> None:
        started = open_in(where, profile(where, llm_server, config, **kw), Target(resume))
        try:
            assert started.opened.resumed is (resume is not None)
            check_cell(where, started, llm_server, policy, name)
            ids.setdefault(policy, started.conversation.id.hex)
        finally:
            started.conversation.close()

    for policy in POLICIES:
        cell("new", policy, policy, None)
    for policy in POLICIES:  # the same flags (none), another config default
        cell("resumed", policy, OTHER[policy], ids[policy])
    if where.restart is not None:
        where.restart()
    for policy in POLICIES:
        cell("restarted", policy, OTHER[policy], ids[policy])
    cell("chosen", "never", "never", ids["always"], chosen=True)  # --confirm wins


# --- the model -----------------------------------------------------------------------------


def agent_replies(started: Started) -> list[str]:
    events = started.conversation.state.events
    return [
        e.llm_message.text for e in events if isinstance(e, MessageEvent) and e.source == "agent"
    ]


def test_a_resume_thinks_with_the_model_and_address_given_now(where: Where, tmp_path: Path) -> None:
    """The first address goes away (the endpoint moved): the resumed conversation calls the
    new one, with the model given now, also after the server restarted."""
    with ScriptedLLMServer() as old, ScriptedLLMServer() as new:
        first = open_in(where, profile(where, old))
        try:
            old.reply_text("From the old place.")
            first.conversation.send_message("hello")
            first.conversation.run()
        finally:
            first.conversation.close()
        old.close()
        moved = profile(where, new, model="openai/moved-model")
        for when in ("resumed", "restarted"):
            if when == "restarted" and where.restart is not None:
                where.restart()
            again = open_in(where, moved, Target(continue_latest=True))
            try:
                assert again.conversation.id == first.conversation.id, when
                assert not any("model" in notice for notice in again.notices), again.notices
                new.reply_text(f"From the new place ({when}).")
                again.conversation.send_message("still there?")
                again.conversation.run()
                assert agent_replies(again)[-1] == f"From the new place ({when}).", when
                assert new.requests[-1]["model"] == "moved-model", when
                assert again.conversation.agent.llm.model == "openai/moved-model"
                if where.url is not None:
                    reported = where.info(again.conversation.id)["agent"]["llm"]
                    assert reported["model"] == "openai/moved-model", when
                    assert reported["base_url"] == new.base_url, when
            finally:
                again.conversation.close()


@pytest.mark.parametrize("place", ["here", "serve"])
def test_a_resume_keeps_the_conversations_rules(
    place: str, request: pytest.FixtureRequest, llm_server: ScriptedLLMServer
) -> None:
    """A rule made in the session (deny `rm`) holds after a resume, where the server takes
    rules (`ohtui serve`) as here: `rm -rf junk` is refused without asking, under "never"."""
    from ohtui.sdk import ApprovalRule, ApprovalRulesPolicy, UserRejectObservation

    where: Where = request.getfixturevalue(place)
    started = open_in(where, profile(where, llm_server, "never"))
    conversation = started.conversation
    try:
        policy = conversation.state.confirmation_policy
        assert isinstance(policy, ApprovalRulesPolicy)
        deny = ApprovalRule(tool="terminal", command_prefix="rm", decision="deny")
        conversation.set_confirmation_policy(policy.with_rule(deny))
        conversation_id = conversation.id.hex
    finally:
        conversation.close()
    again = open_in(where, profile(where, llm_server, "never"), Target(conversation_id))
    try:
        kept = again.conversation.state.confirmation_policy
        assert isinstance(kept, ApprovalRulesPolicy)
        assert [(r.command_prefix, r.decision) for r in kept.rules] == [("rm", "deny")]
        junk = where.workspace / "junk"
        junk.mkdir(exist_ok=True)
        llm_server.reply_tool_call("terminal", {"command": "rm -rf junk", "security_risk": "LOW"})
        llm_server.reply_text("It was refused.")
        again.conversation.send_message("clean up")
        again.conversation.run()
        assert again.conversation.state.execution_status is Status.FINISHED
        assert junk.exists()
        events = again.conversation.state.events
        assert any(isinstance(e, UserRejectObservation) for e in events)
    finally:
        again.conversation.close()


@pytest.mark.peer
@pytest.mark.timeout(900)
@pytest.mark.skipif(not PEER, reason=f"needs {PEER_ENV}")
def test_a_policy_changed_in_the_session_outlives_an_openhands_restart(
    openhands: Where, llm_server: ScriptedLLMServer
) -> None:
    """The OpenHands server, restarted, goes back to the policy a conversation was created
    with; the change the user made later (recorded in its history) is the one kept."""
    from ohtui.sdk import AlwaysConfirm

    where = openhands
    started = open_in(where, profile(where, llm_server, "never"))
    try:
        started.conversation.set_confirmation_policy(AlwaysConfirm())  # as the app's Shift+Tab
        conversation_id = started.conversation.id.hex
    finally:
        started.conversation.close()
    assert where.restart is not None
    where.restart()
    again = open_in(where, profile(where, llm_server, "never"), Target(conversation_id))
    try:
        check_cell(where, again, llm_server, "always", "changed, restarted")
    finally:
        again.conversation.close()
