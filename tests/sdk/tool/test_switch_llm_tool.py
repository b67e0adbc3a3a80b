"""The built-in `switch_llm` tool and `LocalConversation.switch_profile`."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, LLMProfileStore, LocalConversation
from ohtui.sdk.event.llm_convertible.observation import ObservationEvent
from ohtui.sdk.tool.builtins import SwitchLLMObservation, SwitchLLMTool


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own: the default profile folder is under it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def save(server: ScriptedLLMServer, name: str, model: str) -> None:
    llm = LLM(model=model, base_url=server.base_url, num_retries=0, usage_id=name)
    LLMProfileStore().save(name, llm)


def conversation(llm: LLM, workspace: Path) -> LocalConversation:
    agent = Agent(llm=llm, tools=[], include_default_tools=["FinishTool", "SwitchLLMTool"])
    return LocalConversation(agent=agent, workspace=str(workspace), visualizer=None)


def observations(conv: LocalConversation) -> list[SwitchLLMObservation]:
    return [
        e.observation
        for e in conv.state.events
        if isinstance(e, ObservationEvent) and isinstance(e.observation, SwitchLLMObservation)
    ]


def test_the_agent_switches_to_a_saved_profile_for_its_next_calls(
    home: Path, llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    save(llm_server, "big", "openai/big-model")
    conv = conversation(llm, workspace)
    llm_server.reply_tool_call("switch_llm", {"profile_name": "big", "reason": "hard step"})
    llm_server.reply_tool_call("finish", {"message": "done"})
    conv.send_message("switch to the big model")
    conv.run()

    assert [r["model"] for r in llm_server.requests] == ["test-model", "big-model"]
    assert conv.agent.llm.model == "openai/big-model"
    [observation] = observations(conv)
    assert not observation.is_error
    assert observation.active_model == "openai/big-model"
    assert "profile:big" in conv.conversation_stats.usage_to_metrics
    conv.close()


def test_an_unknown_profile_is_an_error_the_agent_reads(
    home: Path, llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = conversation(llm, workspace)
    llm_server.reply_tool_call("switch_llm", {"profile_name": "nope", "reason": "try"})
    llm_server.reply_tool_call("finish", {"message": "done"})
    conv.send_message("switch")
    conv.run()

    [observation] = observations(conv)
    assert observation.is_error
    assert "'nope' was not found" in observation.text
    assert conv.agent.llm.model == "openai/test-model"
    conv.close()


def test_the_tool_lists_the_saved_profiles_and_is_not_a_default(
    home: Path, llm: LLM, llm_server: ScriptedLLMServer
) -> None:
    assert "(none saved yet)" in SwitchLLMTool().description
    assert not (home / ".openhands").exists()  # listing made no folder
    save(llm_server, "fast", "openai/fast")
    save(llm_server, "deep", "openai/deep")
    assert "- deep\n- fast" in SwitchLLMTool().description
    assert "switch_llm" not in {t.name for t in Agent(llm=llm)._built_in_tools()}
