"""An agent hook's tools keep to the conversation's boundary, ohtui's own files included: the
settings are refused to them in every sandbox mode, the sandbox off too, as they are to the
agent's own tools. The hook's agent is what a hostile event (a tool's input the model wrote)
could steer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation, NeverConfirm, Tool
from ohtui.sdk.hooks import HookConfig
from ohtui.sdk.sandbox import SandboxConfig, SandboxMode

SECRET = "sk-live-OHTUI-SETTINGS"


@pytest.mark.parametrize("mode", [SandboxMode.OFF, SandboxMode.WORKSPACE_WRITE])
def test_an_agent_hooks_tools_refuse_ohtuis_files_in_every_mode(
    mode: SandboxMode,
    llm: LLM,
    llm_server: ScriptedLLMServer,
    home: Path,
    project: Path,
    outside_tmp: Path,
) -> None:
    settings = home / ".config" / "ohtui"
    settings.mkdir(parents=True)
    (settings / "config.toml").write_text(f'api_key = "{SECRET}"\n')
    hooks = HookConfig.from_dict(
        {"PreToolUse": [{"hooks": [{"type": "agent", "name": "look", "tools": ["file_editor"]}]}]}
    )
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    with Conversation(
        agent=agent,
        workspace=project,
        persistence_dir=outside_tmp / "conversations",
        visualizer=None,
        hook_config=hooks,
    ) as conversation:
        conversation.set_sandbox(SandboxConfig(mode=mode), private_paths=[str(settings)])
        conversation.set_confirmation_policy(NeverConfirm())
        llm_server.reply_tool_call("terminal", {"command": "echo hi"})  # the agent
        llm_server.reply_tool_call(  # the hook's agent
            "file_editor", {"command": "view", "path": str(settings / "config.toml")}
        )
        llm_server.reply_tool_call("finish", {"message": '{"decision": "allow", "reason": "ok"}'})
        llm_server.reply_text("Done.")
        conversation.send_message("say hi")
        conversation.run()
    hook_saw = json.dumps(llm_server.requests[2]["messages"])
    assert "config.toml" in hook_saw  # it did try
    assert SECRET not in hook_saw
    assert "belongs to the application running the agent" in hook_saw
