"""AgentBase: an LLM plus tools, serializable, resolved against a conversation at run time."""

from __future__ import annotations

import gc
import logging
import re
import sys
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, PrivateAttr, SerializeAsAny, field_validator

from ohtui.sdk.agent.prompts import DEFAULT_PROMPT_FILE, PLANNING_PROMPT_FILE, PROMPT_FILES
from ohtui.sdk.context.agent_context import AgentContext
from ohtui.sdk.context.condenser.base import CondenserBase
from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.llm.streaming import TokenCallbackType
from ohtui.sdk.tool.builtins import BUILT_IN_TOOL_CLASSES, DEFAULT_BUILT_IN_TOOLS
from ohtui.sdk.tool.registry import resolve_tool
from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tool.tool import ToolDefinition
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.event.base import Event
    from ohtui.sdk.event.condenser import Condensation
    from ohtui.sdk.event.llm_convertible.action import ActionEvent
    from ohtui.sdk.mcp.manager import MCPClientManager
    from ohtui.sdk.sandbox import Sandbox

logger = logging.getLogger(__name__)

EventCallback = Callable[["Event"], None]
DEFAULT_SECURITY_POLICY = "security_policy.j2"
"""The SDK's name for its built-in policy file: here, no file and no extra policy."""
DEFAULT_BUILT_IN_NAMES = tuple(cls.__name__ for cls in DEFAULT_BUILT_IN_TOOLS)
"""The tools every agent may have without registering them, by class name."""


class AgentBase(DiscriminatedUnionMixin, ABC):
    """An agent: the LLM it thinks with and the tools it may call.

    What a conversation asks of its agent, all of it declared here:

    - its settings, read and copied: `llm` (`switch_llm` makes a `model_copy` with another),
      `tools`, `include_default_tools`, `agent_context` (skills and plugins add to it),
      `mcp_config` and `condenser` (`condense` and the condenser's own LLM's stats);
    - `verify(persisted)` / `check_resumable`: whether it may take over a saved conversation;
    - `serving(conversation)`: the agent a new conversation runs (this one, or a copy of it
      while another open conversation has it);
    - `start_mcp(...)` and `mcp` (its MCP servers' manager: started, listed, closed);
    - `init_state(state, on_event)` once before the first step, then `step(conversation,
      on_event, on_token)` for each step of a run and `end_run(conversation)` when the run
      ends, however it ends;
    - `tools_map` and `tool_for(action)`: the resolved tools (to run a confirmed action, to
      tell what a pending action's tool is);
    - `close()` when the conversation closes.

    Two capabilities are optional: `ask(question, state, llm=...) -> str` answers a side
    question (`ask_agent`), and `condense_now(state, on_event, focus=...)` condenses at once
    (`condense`). `Agent` has both; here they say the agent cannot (NotImplementedError,
    ValueError), and the conversation passes that on.
    """

    model_config = ConfigDict(
        defer_build=True, frozen=True, extra="forbid", arbitrary_types_allowed=True
    )

    llm: LLM = Field(description="The model the agent thinks with.")
    tools: list[Tool] = Field(
        default_factory=list, description="Tools by registered name, besides the built-in ones."
    )
    include_default_tools: list[str] = Field(
        default_factory=lambda: list(DEFAULT_BUILT_IN_NAMES),
        description="The built-in tools it has, by class name: FinishTool and ThinkTool unless "
        "told otherwise; SwitchLLMTool on request.",
    )
    agent_context: AgentContext | None = Field(
        default=None, description="Text added to the system prompt and to user messages."
    )
    mcp_config: dict[str, Any] = Field(
        default_factory=dict,
        description="MCP servers by name (settings as in .mcp.json's mcpServers, or MCPServer "
        "values, kept as their settings); plugins add theirs, a later one replacing one of "
        "the same name.",
    )
    filter_tools_regex: str | None = Field(
        default=None,
        description="Only the tools whose name matches this regular expression (from its "
        "start) are offered, of those of `tools` and the MCP servers; built-in tools always "
        "are.",
    )
    condenser: SerializeAsAny[CondenserBase] | None = Field(
        default=None,
        description="Keeps a long history within the model's window (None: never condensed).",
    )
    system_prompt_kwargs: dict[str, object] = Field(
        default_factory=dict,
        description="Settings for the system prompt. ohtui's prompt reads `cli_mode` (True: "
        "the agent works on the user's own machine; False: in a hosted workspace); other keys "
        "are kept with the agent but change nothing.",
        examples=[{"cli_mode": True}],
    )
    security_policy_filename: str = Field(
        default=DEFAULT_SECURITY_POLICY,
        description="A file whose text joins the system prompt, as written, as its security "
        "policy (a relative path is read from the current directory). The default "
        f"'{DEFAULT_SECURITY_POLICY}' and '' (or None) add none: ohtui's own rules are in the "
        "prompt's working style.",
    )

    @field_validator("security_policy_filename", mode="before")
    @classmethod
    def _none_is_no_policy(cls, value: object) -> object:
        return "" if value is None else value

    system_prompt_filename: str = Field(
        default=DEFAULT_PROMPT_FILE,
        description=f"Which built-in prompt the agent gets, by the SDK's names: "
        f"'{DEFAULT_PROMPT_FILE}' (the default) or '{PLANNING_PROMPT_FILE}' (explore and "
        "write a plan). ohtui renders no Jinja2 templates of its own.",
    )

    @field_validator("system_prompt_filename")
    @classmethod
    def _known_prompt(cls, name: str) -> str:
        if name not in PROMPT_FILES:
            raise ValueError(
                f"system_prompt_filename {name!r}: ohtui has the built-in prompts "
                f"{', '.join(repr(n) for n in PROMPT_FILES)} and renders no Jinja2 template "
                "files. Add your own instructions with "
                "AgentContext(system_message_suffix=...) instead."
            )
        return name

    tool_concurrency_limit: int = Field(
        default=1,
        ge=1,
        description="How many tool calls of one step may run at the same time (1: one after "
        "the other). Calls of a tool that declares no resources, or declaring a common one, "
        "still run one at a time.",
    )

    @field_validator("mcp_config", mode="before")
    @classmethod
    def _mcp_settings(cls, value: object) -> object:
        """`{"mcpServers": {...}}` unwrapped; MCPServer values as their settings."""
        if not isinstance(value, Mapping):
            return value
        servers = value.get("mcpServers", value)
        if not isinstance(servers, Mapping):
            return value  # refused by the field's own check, naming the type
        # An MCPServer exists only once its module was imported: without it (no servers, or
        # settings only) the models of MCP's configuration are not built.
        server_config = sys.modules.get("ohtui.sdk.mcp.server_config")
        if server_config is None:
            return dict(servers)
        return {
            name: server.to_settings() if isinstance(server, server_config.MCPServer) else server
            for name, server in servers.items()
        }

    @field_validator("filter_tools_regex")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"filter_tools_regex {pattern!r} is not a regular expression: {exc}"
                ) from exc
        return pattern

    @field_validator("include_default_tools")
    @classmethod
    def _known_built_ins(cls, names: list[str]) -> list[str]:
        unknown = [name for name in names if name not in BUILT_IN_TOOL_CLASSES]
        if unknown:
            raise ValueError(
                f"unknown built-in tool(s) {', '.join(unknown)}: include_default_tools takes "
                f"{', '.join(BUILT_IN_TOOL_CLASSES)}"
            )
        return names

    _tools: dict[str, ToolDefinition[Any, Any]] | None = PrivateAttr(default=None)
    _tools_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _owner: weakref.ref[object] | None = PrivateAttr(default=None)
    _mcp: Any = PrivateAttr(default=None)  # MCPClientManager, imported on first use
    _mcp_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _mcp_version: int = PrivateAttr(default=-1)

    def read_security_policy(self) -> str | None:
        """The custom security policy's text, or None when the agent has none.

        ValueError, naming the file and the field, when it cannot be read.
        """
        name = self.security_policy_filename
        if not name or name == DEFAULT_SECURITY_POLICY:
            return None
        path = Path(name).expanduser()
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ValueError(
                f"security_policy_filename {name!r}: cannot read it ({why}); give the path of "
                "a UTF-8 text file, or leave it unset for no custom policy"
            ) from exc

    @property
    def tools_map(self) -> dict[str, ToolDefinition[Any, Any]]:
        """The resolved tools by name (after `init_state`)."""
        if self._tools is None:
            raise RuntimeError("the agent's tools are resolved by init_state() first")
        return self._tools

    def resolve_tools(self, state: ConversationState) -> dict[str, ToolDefinition[Any, Any]]:
        """Create this agent's tools for a conversation (once); ValueError for unknown tools.

        Tools hold per-conversation resources (a shell, edit history): a conversation gets
        an agent of its own through `serving`.
        """
        with self._tools_lock:
            if self._tools is None:
                tools: dict[str, ToolDefinition[Any, Any]] = {}
                for spec in self.tools:
                    for tool in resolve_tool(spec, state):
                        if tool.name in tools:
                            raise ValueError(f"two tools are named '{tool.name}'")
                        tools[tool.name] = tool
                for tool in self._built_in_tools():
                    tools.setdefault(tool.name, tool)
                if self.mcp_config:
                    tools = self._with_mcp_tools(tools, state.workspace.working_dir)
                self._tools = self._filtered(tools)
            return self._tools

    def _filtered(
        self, tools: dict[str, ToolDefinition[Any, Any]]
    ) -> dict[str, ToolDefinition[Any, Any]]:
        """`tools` without those `filter_tools_regex` leaves out; built-in tools stay."""
        if self.filter_tools_regex is None:
            return tools
        pattern = re.compile(self.filter_tools_regex)
        built_in = {tool.name for tool in self._built_in_tools()}
        return {n: t for n, t in tools.items() if n in built_in or pattern.match(n)}

    def serving(self, conversation: object) -> AgentBase:
        """The agent `conversation` runs: this one, now its conversation's, or a copy.

        An agent's tools and MCP servers belong to one conversation. This one is taken when
        no open conversation has it: one closed, or dropped by the caller (`del
        conversation`; collected here first), gives it up, its left-over tools closed. While
        another open conversation still has it, `conversation` gets a copy: the same
        settings and the same LLM object (its metrics count both), tools of its own.
        """
        if self._take(conversation):
            return self
        gc.collect()  # a conversation the caller dropped lives on in its reference cycles
        if self._take(conversation):
            return self
        logger.info(
            "this %s is in use by another open conversation: this one runs a copy of it "
            "(the same settings and LLM, tools of its own)",
            type(self).__name__,
        )
        copy = self.unshared_copy()
        copy._take(conversation)
        return copy

    def _take(self, conversation: object) -> bool:
        """Make `conversation` this agent's owner unless another live one is; whether it is."""
        with self._tools_lock:
            owner = self._owner() if self._owner is not None else None
            if owner is conversation:
                return True
            if owner is not None:
                return False
            stale = self._owner is not None  # its conversation was collected, never closed
        if stale:
            self.close()  # the dropped conversation's shell and servers
        with self._tools_lock:
            if self._owner is not None and self._owner() is not None:
                return self._owner() is conversation
            self._owner = weakref.ref(conversation)
        self.forget_conversation()
        return True

    def forget_conversation(self) -> None:
        """Called when a conversation takes this agent: drop what the one before left (its
        tools are closed already). Agents keeping a conversation's history extend this."""

    def unshared_copy(self) -> AgentBase:
        """A copy with the same settings (the same objects: LLM, context, condenser) and
        nothing of this one's per-conversation parts (tools, MCP servers)."""
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        return type(self).model_construct(_fields_set=set(self.model_fields_set), **fields)

    def tool_for(self, event: ActionEvent) -> ToolDefinition[Any, Any] | None:
        """The tool that runs an action: an MCP call by its server and tool (a conversation
        saved before MCP tools were named `server_tool` still runs its waiting calls), any
        other by its name."""
        from ohtui.sdk.mcp.definition import MCPToolAction, mcp_tool_name

        action = event.action
        if isinstance(action, MCPToolAction) and action.server:
            return self.tools_map.get(mcp_tool_name(action.server, action.tool))
        return self.tools_map.get(event.tool_name)

    @property
    def mcp(self) -> MCPClientManager | None:
        """The MCP servers' client manager, once started (None without MCP servers)."""
        manager: MCPClientManager | None = self._mcp
        return manager

    def start_mcp(
        self,
        working_dir: str | None = None,
        secret: Callable[[str], str | None] | None = None,
        *,
        launch: bool = True,
        sandbox: Callable[[], Sandbox | None] | None = None,
        check: Callable[[str], str | None] | None = None,
    ) -> MCPClientManager | None:
        """Start the MCP servers of `mcp_config` in the background (once); returns at once.

        `secret` looks up the conversation secrets that `env` and `headers` values name;
        `sandbox` gives the conversation's sandbox, where `sandboxed` servers start;
        `check` says, before each start, why a server may not start (see MCPClientManager).
        Servers whose settings are wrong are listed as failed, with the reason. `launch`
        False only sets the manager up (its servers listed as starting): they start on the
        next call, or when the tools are first needed.
        """
        if not self.mcp_config:
            return None
        with self._mcp_lock:
            if self._mcp is None:
                from ohtui.sdk.mcp.config import MCPConfigError, parse_server
                from ohtui.sdk.mcp.manager import MCPClientManager

                specs, errors = {}, {}
                for name, spec in self.mcp_config.items():
                    try:
                        specs[name] = parse_server(name, spec)
                    except MCPConfigError as exc:
                        errors[name] = str(exc)
                self._mcp = MCPClientManager(
                    specs,
                    errors=errors,
                    working_dir=working_dir,
                    secret=secret,
                    sandbox=sandbox,
                    check=check,
                )
            manager: MCPClientManager = self._mcp
        if launch:
            manager.start()
        return manager

    def _with_mcp_tools(
        self, tools: dict[str, ToolDefinition[Any, Any]], working_dir: str
    ) -> dict[str, ToolDefinition[Any, Any]]:
        """`tools` plus those of the MCP servers, once they have all started or failed."""
        manager = self.start_mcp(working_dir)  # started early (or set up to start), or now
        assert manager is not None
        manager.reserve(name for name, t in tools.items() if not _is_mcp(t))
        manager.wait_settled()
        self._mcp_version = manager.version
        own = {name: t for name, t in tools.items() if not _is_mcp(t)}
        for tool in manager.tool_definitions():
            own.setdefault(tool.name, tool)
        return own

    def sync_mcp_tools(self) -> bool:
        """Take in the MCP servers' changes since the tools were resolved (a server turned
        on or off, a tool list changed); whether the tools changed."""
        manager = self._mcp
        if manager is None or self._tools is None or manager.version == self._mcp_version:
            return False
        with self._tools_lock:
            if self._tools is None:
                return False
            self._mcp_version = manager.version
            own = {name: t for name, t in self._tools.items() if not _is_mcp(t)}
            for tool in manager.tool_definitions():
                own.setdefault(tool.name, tool)
            own = self._filtered(own)
            changed = set(own) != set(self._tools)
            self._tools = own
        return changed

    def _built_in_tools(self) -> list[ToolDefinition[Any, Any]]:
        return [BUILT_IN_TOOL_CLASSES[name]() for name in self.include_default_tools]

    def verify(self, persisted: AgentBase, events: object = None) -> AgentBase:
        """Check this agent can take over a conversation `persisted` ran; return self.

        The class must be the same, and every tool `persisted` had must still be here (the
        history refers to them); the LLM, context and added tools may change. ValueError
        says what differs. `events` is accepted for compatibility and not used.
        """
        check_resumable(
            self,
            type(persisted).__name__,
            [t.name for t in persisted.tools],
            persisted.include_default_tools,
        )
        return self

    def close(self) -> None:
        """Close every resolved tool (processes, files); the agent may serve another
        conversation afterwards. Subclasses holding more resources extend this."""
        with self._tools_lock:
            tools, self._tools, self._owner = self._tools, None, None
        with self._mcp_lock:
            manager, self._mcp = self._mcp, None
        if manager is not None:
            manager.close()  # ends every server's session: no child process is left
        for tool in (tools or {}).values():
            tool.close()

    def init_state(self, state: ConversationState, on_event: EventCallback) -> None:
        """Prepare a conversation: resolve the tools. Agents that record a system prompt
        extend this."""
        self.resolve_tools(state)

    def end_run(self, conversation: LocalConversation) -> None:
        """Called when a run ends, however it ends; agents managing their context extend this."""

    def ask(
        self,
        question: str,
        state: ConversationState,
        llm: LLM | None = None,
        cancel: threading.Event | None = None,
    ) -> str:
        """Answer a side question from the history, recording nothing (`ask_agent`).
        NotImplementedError unless the agent can."""
        raise NotImplementedError(f"{type(self).__name__} cannot answer side questions")

    def condense_now(
        self, state: ConversationState, on_event: EventCallback, focus: str | None = None
    ) -> Condensation:
        """Condense the history at once (`condense`); ValueError unless the agent can."""
        raise ValueError(
            f"Cannot condense conversation: {type(self).__name__} does not condense on "
            "request (Agent does)."
        )

    @abstractmethod
    def step(
        self,
        conversation: LocalConversation,
        on_event: EventCallback,
        on_token: TokenCallbackType | None = None,
    ) -> None:
        """Take one step: at most one LLM call and the actions it asks for.

        Once `conversation.cancel_requested` is set (by `interrupt()`), stop as soon as
        possible: abandon the LLM call, start no more actions.
        """


def _is_mcp(tool: ToolDefinition[Any, Any]) -> bool:
    from ohtui.sdk.mcp.definition import MCPToolDefinition

    return isinstance(tool, MCPToolDefinition)


def check_resumable(
    agent: AgentBase, kind: str, tool_names: Iterable[str], built_ins: Iterable[str]
) -> None:
    """ValueError unless `agent` can resume a conversation run by a `kind` agent that had
    these tools (spec names) and built-in tools (class names)."""
    if kind != type(agent).__name__:
        raise ValueError(
            f"Cannot load from persisted agent: the persisted agent is of type {kind}, self is "
            f"of type {type(agent).__name__}. Resume the conversation with {kind}, or start a "
            "new conversation."
        )
    have = {t.name for t in agent.tools} | {t.name for t in agent._built_in_tools()}
    had = {BUILT_IN_TOOL_CLASSES[c]().name for c in built_ins if c in BUILT_IN_TOOL_CLASSES}
    removed = sorted({*tool_names, *had} - have)
    if removed:
        them = "it" if len(removed) == 1 else "them"
        raise ValueError(
            f"Cannot resume: tools were removed mid-conversation (removed: {', '.join(removed)}). "
            f"The history refers to {them}: add {them} back to the agent, or start a new "
            "conversation."
        )
