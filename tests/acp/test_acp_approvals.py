"""Approvals over ACP: an action ohtui would ask about becomes session/request_permission,
and the client's answer is applied as the TUI's approval screen applies it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp_client import running
from llm_server import ScriptedLLMServer


def command(llm_server: ScriptedLLMServer, line: str, then: str) -> None:
    llm_server.reply_tool_call("terminal", {"command": line, "security_risk": "LOW"})
    llm_server.reply_text(then)


def test_allow_once_reject_and_allow_always_then_no_second_request(
    env: dict[str, str], home: Path, llm_server: ScriptedLLMServer
) -> None:
    project = home / "project"
    command(llm_server, "echo one > one.txt", "Wrote one.")
    command(llm_server, "echo two > two.txt", "Did not write two.")
    command(llm_server, "ls", "Listed.")
    command(llm_server, "ls -a", "Listed again.")
    command(llm_server, "date", "No date then.")
    command(llm_server, "date -u", "No date again.")

    async def scenario() -> None:
        async with running({**env, "OHTUI_CONFIRM": "always"}, project) as agent:
            await agent.initialize()
            new = await agent.connection.new_session(cwd=str(project), mcp_servers=[])
            assert new.modes is not None and new.modes.current_mode_id == "always"
            assert [m.id for m in new.modes.available_modes] == ["always", "risky", "never"]
            session = new.session_id
            client = agent.client

            client.answers.append("allow_once")
            assert (await agent.prompt(session, "write one")).stop_reason == "end_turn"
            assert (project / "one.txt").read_text() == "one\n"
            (asked,) = client.asked
            assert asked.tool_call.title == "`echo one > one.txt`"
            assert asked.tool_call.kind == "execute" and asked.tool_call.status == "pending"
            assert asked.meta["ohtui"]["risk"] == "LOW"
            reason = "the confirmation policy is 'always confirm' (every action waits for you)"
            assert asked.meta["ohtui"]["reason"] == reason
            words = asked.tool_call.content[0].content.text.split("\n\n")
            assert words[0] == f"**Risk: LOW.** ohtui asks because {reason}."
            assert words[-1] == (
                'No "always" rule is offered: no rule can cover this command (it writes to '
                "one.txt)."
            )
            statuses = [u.status for u in client.of_kind("tool_call_update")]
            assert statuses == ["in_progress", "completed"]  # pending until allowed
            kinds = [o.kind for o in asked.options]
            assert kinds == ["allow_once", "reject_once"]

            client.answers.append("reject_once")
            assert (await agent.prompt(session, "write two")).stop_reason == "end_turn"
            assert not (project / "two.txt").exists()
            failed = [u for u in client.of_kind("tool_call_update") if u.status == "failed"]
            assert failed and "Rejected: The user rejected this action." in (
                failed[-1].content[0].content.text
            )

            client.answers.append("allow_always")
            await agent.prompt(session, "list")
            third = client.asked[2]
            allow_always = [o for o in third.options if o.kind == "allow_always"]
            assert (
                allow_always[0].name
                == "Always allow terminal commands starting with `ls` (this session)"
            )
            await agent.prompt(session, "list all")
            assert len(client.asked) == 3  # `ls -a` ran under the rule, unasked
            done = [u for u in client.of_kind("tool_call_update") if u.status == "completed"]
            assert len(done) == 3

            client.answers.append("reject_always")
            await agent.prompt(session, "the date")
            fifth = client.asked[3]
            reject_always = [o for o in fifth.options if o.kind == "reject_always"]
            assert reject_always[0].name == (
                "Always reject terminal commands starting with `date` (this session)"
            )
            await agent.prompt(session, "the date in UTC")
            assert len(client.asked) == 4  # the deny rule refused it, unasked
            refused = client.of_kind("tool_call_update")[-1]
            assert (
                refused.status == "failed" and "denied by rule" in refused.content[0].content.text
            )

    asyncio.run(scenario())
    rejected = [m for m in llm_server.requests[3]["messages"] if m["role"] == "tool"]
    assert "The user rejected this action." in str(rejected[-1]["content"])


def test_a_mode_is_a_policy_and_never_asks_nothing(
    env: dict[str, str], home: Path, llm_server: ScriptedLLMServer
) -> None:
    project = home / "project"
    command(llm_server, "echo three > three.txt", "Wrote three.")

    async def scenario() -> None:
        async with running({**env, "OHTUI_CONFIRM": "always"}, project) as agent:
            await agent.initialize()
            session = await agent.new_session(project)
            await agent.connection.set_session_mode(session_id=session, mode_id="never")
            await agent.client.wait_for(lambda: bool(agent.client.of_kind("current_mode_update")))
            assert (await agent.prompt(session, "write three")).stop_reason == "end_turn"
            assert agent.client.asked == []
            assert (project / "three.txt").exists()

    asyncio.run(scenario())


def test_cancel_while_asked_runs_nothing_and_the_next_prompt_rejects_what_waited(
    env: dict[str, str], home: Path, llm_server: ScriptedLLMServer
) -> None:
    project = home / "project"
    llm_server.reply_tool_call("terminal", {"command": "touch ran.txt", "security_risk": "LOW"})
    llm_server.reply_text("Understood, I will not.")

    async def scenario() -> None:
        async with running({**env, "OHTUI_CONFIRM": "always"}, project) as agent:
            await agent.initialize()
            session = await agent.new_session(project)
            agent.client.answers.append("wait")
            turn = asyncio.ensure_future(agent.prompt(session, "touch it"))
            await agent.client.wait_for(lambda: bool(agent.client.asked))
            await agent.connection.cancel(session_id=session)
            async with asyncio.timeout(10):
                assert (await turn).stop_reason == "cancelled"
            response = await agent.prompt(session, "never mind")
            assert response.stop_reason == "end_turn"
            assert len(agent.client.asked) == 1
            assert not (project / "ran.txt").exists()

    asyncio.run(scenario())
    tool_results = [m for m in llm_server.requests[-1]["messages"] if m["role"] == "tool"]
    assert "the user cancelled while this action waited" in str(tool_results[-1]["content"])
