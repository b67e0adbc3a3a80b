"""Helpers for `ohtui serve` tests: OpenHands-shaped payloads and a WebSocket reader."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from llm_server import ScriptedLLMServer
from pydantic import SecretStr
from server_process import TEST_KEY, ServerProcess
from tcp_proxy import TCPProxy

from ohtui.sdk import (
    LLM,
    Agent,
    Conversation,
    LLMSummarizingCondenser,
    RemoteConversation,
    RemoteWorkspace,
    Tool,
)


def agent_payload(
    llm: ScriptedLLMServer, tools: tuple[str, ...] = ("terminal",), **llm_extra: Any
) -> dict[str, Any]:
    """An agent as the OpenHands 1.58 client sends it (extra fields included)."""
    return {
        "kind": "Agent",
        "llm": {
            "model": "openai/test-model",
            "base_url": llm.base_url,
            "api_key": "sk-test-0123456789abcdef",
            "usage_id": "agent",
            "num_retries": 0,
            "openrouter_site_url": "https://docs.all-hands.dev/",  # OpenHands-only
            "log_completions": False,
            **llm_extra,
        },
        "tools": [{"name": name, "params": {}} for name in tools],
        "mcp_config": {},
        "filter_tools_regex": None,
        "include_default_tools": ["FinishTool", "ThinkTool"],
        "system_prompt_filename": "system_prompt.j2",
        "system_prompt_extra": "ohtui-only",
    }


def create_payload(llm: ScriptedLLMServer, workspace: Path, **extra: Any) -> dict[str, Any]:
    """A StartConversationRequest like the OpenHands client's."""
    return {
        "agent": agent_payload(llm),
        "workspace": {"working_dir": str(workspace), "kind": "LocalWorkspace"},
        "max_iterations": 50,
        "stuck_detection": True,
        "autotitle": False,
        "confirmation_policy": {"kind": "NeverConfirm"},
        "initial_message": None,
        "plugins": None,
        "hook_config": None,
        "tags": {},
        **extra,
    }


def user_message(text: str, run: bool = False) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "run": run}


class Frames:
    """A WebSocket subscriber on a thread, collecting frames as JSON."""

    def __init__(
        self,
        url: str,
        key: str | None,
        headers: dict[str, str] | None = None,
        on_frame: Any = None,
    ) -> None:
        from websockets.sync.client import connect

        self.frames: list[dict[str, Any]] = []
        self._on_frame = on_frame
        self.close_code: int | None = None
        self.close_reason = ""
        self._cond = threading.Condition()
        self._socket = connect(url, additional_headers=headers or {}, open_timeout=10).__enter__()
        if key is not None:
            self._socket.send(json.dumps({"type": "auth", "session_api_key": key}))
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            for text in self._socket:
                frame = json.loads(text)
                if self._on_frame is not None:
                    self._on_frame(frame)
                with self._cond:
                    self.frames.append(frame)
                    self._cond.notify_all()
        except ConnectionClosed:
            pass
        finally:
            with self._cond:
                self.close_code = self._socket.close_code
                self.close_reason = self._socket.close_reason or ""
                self._cond.notify_all()

    def send(self, data: dict[str, Any]) -> None:
        self._socket.send(json.dumps(data))

    def wait_for(self, predicate: Any, timeout: float = 20.0) -> dict[str, Any]:
        """The first frame (in order) matching `predicate`; AssertionError after `timeout`."""
        with self._cond:
            found = self._cond.wait_for(
                lambda: next((f for f in self.frames if predicate(f)), None), timeout
            )
        assert found, f"no matching frame in {timeout} s; got {[_brief(f) for f in self.frames]}"
        return found

    def wait_closed(self, timeout: float = 15.0) -> int | None:
        with self._cond:
            self._cond.wait_for(lambda: self.close_code is not None, timeout)
        return self.close_code

    def kinds(self) -> list[str]:
        with self._cond:
            return [_brief(f) for f in self.frames]

    def close(self) -> None:
        self._socket.close()
        self._thread.join(5)


def _brief(frame: dict[str, Any]) -> str:
    if frame.get("kind") == "ConversationStateUpdateEvent":
        value = frame["value"]
        shown = value.get("execution_status") if frame["key"] == "full_state" else value
        return f"{frame['key']}={shown if isinstance(shown, str) else '…'}"
    return str(frame.get("kind"))


def is_full_state(status: str | None = None) -> Any:
    def match(frame: dict[str, Any]) -> bool:
        return (
            frame.get("kind") == "ConversationStateUpdateEvent"
            and frame.get("key") == "full_state"
            and (status is None or frame["value"]["execution_status"] == status)
        )

    return match


def after_run_full_state(status: str) -> Any:
    """The full_state that ends a run: it follows a per-field execution_status update."""

    def match(frame: dict[str, Any]) -> bool:
        return is_full_state(status)(frame)

    return match


def make_agent(llm: ScriptedLLMServer, *, stream: bool = False, condense: bool = False) -> Agent:
    model = LLM(
        model="openai/test-model",
        base_url=llm.base_url,
        api_key=SecretStr("sk-test"),
        usage_id="agent",
        num_retries=0,
        stream=stream,
    )
    condenser = None
    if condense:
        summarizer = model.model_copy(update={"usage_id": "condenser", "stream": False})
        condenser = LLMSummarizingCondenser(llm=summarizer, max_size=80, keep_first=1)
    return Agent(llm=model, tools=[Tool(name="terminal")], condenser=condenser)


def attach(
    server: ServerProcess | TCPProxy, llm: ScriptedLLMServer, workspace: Path, **kwargs: Any
) -> RemoteConversation:
    remote = RemoteWorkspace(host=server.url, api_key=TEST_KEY, working_dir=str(workspace))
    kwargs.setdefault("visualizer", None)
    kwargs.setdefault("reconnect_backoff", 0.05)
    agent = make_agent(
        llm, stream=kwargs.pop("stream", False), condense=kwargs.pop("condense", False)
    )
    conversation = Conversation(agent, workspace=remote, autotitle=False, **kwargs)
    assert isinstance(conversation, RemoteConversation)
    return conversation


def wait(predicate: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
