"""Settings: the pydantic model of config.toml. One declaration drives defaults, validation,
the example file and the settings screen.

Every field is optional in the file: a missing key takes the default written here.
Secrets never live here; API keys and user secrets are in the OS keyring.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ohtui.sdk.conversation.stuck_detector import StuckDetectionThresholds
from ohtui.sdk.sandbox import DEFAULT_HIDDEN, SandboxConfig, SandboxMode
from ohtui.sdk.security.approval_rules import ApprovalRule
from ohtui.settings.choices import ConfirmationPolicy, ContextStrategy
from ohtui.settings.plugins import PluginEntry

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high"]
KNOWN_TOOLS = ("terminal", "file_editor", "task_tracker")


class Section(BaseModel):
    """A config.toml table: keys we do not know are kept in the file but not read."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)


class LLMSettings(Section):
    """[llm]: which model answers, and how it is called."""

    model: str | None = Field(
        default=None,
        title="Model",
        description="litellm model name, e.g. 'anthropic/claude-sonnet-4-5'.",
    )
    base_url: str | None = Field(
        default=None,
        title="Base URL",
        description="An OpenAI-compatible endpoint; unset: the provider's own.",
    )
    api_version: str | None = Field(default=None, description="For providers that need one.")
    temperature: float | None = Field(default=None, ge=0, le=2, description="0 to 2.")
    max_output_tokens: int | None = Field(default=None, gt=0, description="Per answer.")
    timeout: float = Field(default=300.0, gt=0, description="Seconds to wait for one answer.")
    connect_timeout: float = Field(
        default=10.0, gt=0, description="Seconds to wait to connect to the server."
    )
    num_retries: int = Field(default=4, ge=0, le=20, description="Retries on 429, 5xx, timeouts.")
    reasoning_effort: ReasoningEffort | None = Field(
        default=None,
        title="Reasoning",
        description="For reasoning models: none, minimal, low, medium or high.",
    )

    @field_validator("model", "base_url", "api_version")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://, e.g. http://127.0.0.1:8000/v1")
        return value


class AgentSettings(Section):
    """[agent]: the agent's tools and when a run stops by itself."""

    tools: list[str] = Field(
        default_factory=lambda: list(KNOWN_TOOLS),
        description="Any of terminal, file_editor, task_tracker.",
    )
    max_iteration_per_run: int = Field(
        default=500,
        ge=1,
        title="Steps per run",
        description="Steps one run may take before it stops.",
    )
    stuck_detection: bool = Field(
        default=True, title="Stuck agents", description="Stop an agent that loops."
    )
    stuck_thresholds: StuckDetectionThresholds = Field(
        default_factory=StuckDetectionThresholds,
        description="Repetitions that count as stuck, per pattern.",
    )
    plugins: list[PluginEntry] = Field(
        default_factory=list,
        title="Plugins",
        description="Comma-separated: a folder, a git URL or github:owner/repo, each with an "
        "optional #ref (branch, tag, commit). Applies to new conversations.",
    )

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, tools: list[str]) -> list[str]:
        unknown = [t for t in tools if t not in KNOWN_TOOLS]
        if unknown:
            raise ValueError(f"unknown tool {unknown[0]!r}; the tools are {', '.join(KNOWN_TOOLS)}")
        return list(dict.fromkeys(tools))


class ConfirmationSettings(Section):
    """[confirmation]: which actions wait for approval, and the user's standing rules."""

    policy: ConfirmationPolicy = Field(
        default=ConfirmationPolicy.RISKY,
        title="Confirmation",
        description="always, risky (medium risk and up) or never.",
    )
    rules: list[ApprovalRule] = Field(
        default_factory=list, description="Approval rules of scope user (every workspace)."
    )

    @field_validator("rules", mode="before")
    @classmethod
    def _user_scope(cls, rules: Any) -> Any:
        if not isinstance(rules, list):
            return rules
        return [_user_rule(item) if isinstance(item, dict) else item for item in rules]


class SandboxSettings(Section):
    """[sandbox]: how far the agent's commands and file edits are confined (bubblewrap)."""

    mode: SandboxMode = Field(
        default=SandboxMode.WORKSPACE_WRITE,
        title="Sandbox",
        description="workspace-write (only the workspace is writable), read-only, or off. "
        "Without a working bubblewrap, commands run with off, and ohtui says so.",
    )
    network: bool = Field(
        default=False, title="Network", description="Let sandboxed commands reach the network."
    )
    writable: list[str] = Field(
        default_factory=list, description="More paths commands may write, e.g. '~/.cache/pip'."
    )
    hidden: list[str] = Field(
        default_factory=lambda: list(DEFAULT_HIDDEN),
        description="Paths hidden from commands, even from reads (credentials).",
    )
    sockets: list[str] = Field(
        default_factory=list,
        description="Sockets of other services commands may reach, by path or variable, e.g. "
        "'$SSH_AUTH_SOCK' (none by default: no ssh agent, D-Bus or keyring).",
    )

    def config(self) -> SandboxConfig:
        """The engine's sandbox configuration."""
        return SandboxConfig(
            mode=self.mode,
            network=self.network,
            writable=tuple(self.writable),
            hidden=tuple(self.hidden),
            sockets=tuple(self.sockets),
        )


class ContextSettings(Section):
    """[context]: how a long conversation is kept within the model's context window."""

    strategy: ContextStrategy = Field(
        default=ContextStrategy.SUMMARIZING_CONDENSER,
        title="Context",
        description="How a long conversation fits the model's window. Applies to "
        "conversations opened after saving (this one reopens with it).",
    )
    threshold: float | None = Field(
        default=None,
        gt=0,
        le=1,
        title="Threshold",
        description="Share of the window (0-1, e.g. 0.7) that triggers condensing or "
        "summarizing before a call. Unset: when the window is full.",
    )
    max_input_tokens: int | None = Field(
        default=None,
        gt=0,
        title="Window",
        description="The model's context window in tokens, for a model litellm does not "
        "know. Unset: litellm's.",
    )
    max_size: int = Field(
        default=80,
        gt=0,
        title="Max events",
        description="Condenser: events in the model's view before the middle is summarized.",
    )
    keep_first: int = Field(
        default=4,
        ge=0,
        title="Keep first",
        description="Condenser: leading events never summarized (system prompt, the task).",
    )
    window_size: int = Field(
        default=40,
        ge=0,
        title="Window size",
        description="Sliding window: the most recent messages kept.",
    )
    summary_ratio: float = Field(
        default=0.3,
        ge=0.1,
        le=0.8,
        title="Summary ratio",
        description="Summarizing manager: share of the oldest messages summarized (0.1-0.8).",
    )
    preserve_recent_messages: int = Field(
        default=10,
        ge=0,
        title="Keep recent",
        description="Summarizing manager: recent messages never summarized.",
    )

    @model_validator(mode="after")
    def _room_to_condense(self) -> ContextSettings:
        if self.strategy is ContextStrategy.SUMMARIZING_CONDENSER:
            room = self.max_size // 2 - 1
            if self.keep_first >= room:
                raise ValueError(
                    f"keep_first ({self.keep_first}) must be less than max_size // 2 - 1 "
                    f"({room}) to leave room to condense: lower keep_first or raise max_size"
                )
        return self

    @property
    def trigger(self) -> float:
        """The share of the window at which the strategy acts on tokens (1.0: when full)."""
        if self.strategy is ContextStrategy.NONE or self.threshold is None:
            return 1.0
        return self.threshold


class UISettings(Section):
    """[ui]: how the app looks."""

    theme: str = Field(default="textual-dark", title="Theme", description="A Textual theme name.")
    expand_outputs: bool = Field(
        default=False, title="Tool outputs", description="Show tool outputs expanded."
    )
    auto_title: bool = Field(
        default=True,
        title="Titles",
        description="Have the model title a conversation after its first reply.",
    )
    screen_reader: bool = Field(
        default=False,
        title="Screen reader",
        description="Plain text for screen readers: no animation, no box drawing, each "
        "line says what it is. From the next start (now: --screen-reader).",
    )

    @field_validator("screen_reader", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> bool:
        from ohtui.settings.screen_reader import SwitchError, parse_switch

        try:
            return parse_switch(value)
        except SwitchError as exc:
            raise ValueError(str(exc)) from None


class StorageSettings(Section):
    """[storage]: where conversations are kept."""

    conversations_dir: Path | None = Field(
        default=None, description="Unset: the user data directory's 'conversations'."
    )

    @field_validator("conversations_dir")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None and str(value) else None


class MCPServerSettings(Section):
    """[mcp.servers.NAME]: one MCP server. stdio: `command`, `args`, `env`, `cwd`; streamable
    HTTP: `url`, `headers`. A value of `env` or `headers` may be `${NAME}`: the secret NAME
    (Secrets in /settings, kept in the keyring), filled in when the server starts."""

    command: str | None = Field(default=None, description="The program to run (stdio).")
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables.")
    cwd: str | None = Field(
        default=None,
        description="Its folder; a relative one is within the workspace (default: /, a "
        "folder the agent cannot write into).",
    )
    url: str | None = Field(default=None, description="The server's address (HTTP).")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers.")
    transport: str | None = Field(
        default=None, description="stdio, http or sse (default: from command or url)."
    )
    enabled: bool = Field(default=True, description="false: configured, but not started.")
    timeout: float = Field(default=300.0, gt=0, description="Seconds one tool call may take.")
    startup_timeout: float = Field(
        default=30.0, gt=0, description="Seconds the server may take to start."
    )

    @model_validator(mode="after")
    def _usable(self) -> MCPServerSettings:
        from ohtui.sdk.mcp.config import MCPConfigError, parse_server

        try:
            parse_server("server", self.to_spec())
        except MCPConfigError as exc:
            raise ValueError(str(exc).removeprefix("MCP server 'server': ")) from None
        return self

    def to_spec(self) -> dict[str, Any]:
        """The server in the mcpServers JSON form (timeouts in milliseconds)."""
        spec: dict[str, Any] = {
            key: value
            for key, value in self.model_dump(
                include={"command", "args", "env", "cwd", "url", "headers", "transport"},
                exclude_none=True,
            ).items()
            if value not in ({}, [])
        }
        spec["enabled"] = self.enabled
        spec["timeout"] = self.timeout * 1000
        spec["startupTimeout"] = self.startup_timeout * 1000
        return spec


class MCPSettings(Section):
    """[mcp]: the MCP servers whose tools the agent may call."""

    servers: dict[str, MCPServerSettings] = Field(
        default_factory=dict, description="[mcp.servers.NAME] tables, one per server."
    )

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, MCPServerSettings]) -> dict[str, MCPServerSettings]:
        from ohtui.sdk.mcp.config import MCPConfigError, parse_server

        for name, server in servers.items():
            try:
                parse_server(name, server.to_spec())
            except MCPConfigError as exc:
                raise ValueError(str(exc)) from None
        return servers

    def mcp_config(self) -> dict[str, Any]:
        """The servers in the mcpServers JSON form, by name (what an agent takes)."""
        return {name: server.to_spec() for name, server in self.servers.items()}


class ServerSettings(Section):
    """[server]: an agent server the conversations run on (unset: on this machine)."""

    url: str | None = Field(
        default=None,
        description="`ohtui serve`, or an OpenHands agent server, e.g. http://devbox:8000. "
        "Its session key: OHTUI_SERVER_API_KEY, or saved in the keyring.",
    )

    roots: list[str] = Field(
        default_factory=list,
        description="For `ohtui serve`: the folders conversations may work in (absolute, or "
        "starting with ~; `--root` wins). Default: the folder it was started in.",
    )

    @field_validator("roots")
    @classmethod
    def _absolute_roots(cls, roots: list[str]) -> list[str]:
        for root in roots:
            if not (root.startswith("~") or Path(root).is_absolute()):
                raise ValueError(f"'{root}' is not an absolute path (or one starting with ~)")
        return roots

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip().rstrip("/")
        scheme = value.split("://", 1)[0] if "://" in value else "http"
        if scheme not in ("http", "https") or not value.split("://")[-1]:
            raise ValueError(
                f"'{value}' is not an agent server URL: give http://host:port or https://host"
            )
        return value if "://" in value else f"http://{value}"


class Settings(BaseModel):
    """Everything config.toml can say."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    llm: LLMSettings = Field(default_factory=LLMSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    confirmation: ConfirmationSettings = Field(default_factory=ConfirmationSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    ui: UISettings = Field(default_factory=UISettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    mcp: MCPSettings = Field(default_factory=MCPSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)

    def to_toml(self) -> dict[str, Any]:
        """The values that differ from the defaults, as TOML-ready tables."""
        data = self.model_dump(mode="json", exclude_defaults=True, exclude_none=True)
        rules = data.get("confirmation", {}).get("rules")
        if rules:
            data["confirmation"]["rules"] = [
                {k: v for k, v in rule.items() if k not in ("scope", "workspace", "kind")}
                for rule in rules
            ]
        return {name: table for name, table in data.items() if table}


def _user_rule(item: dict[str, Any]) -> dict[str, Any]:
    """A rule from the file: scope user, and an id that stays the same from load to load."""
    rule = {**item, "scope": "user"}
    if "id" not in rule:
        key = "|".join(
            str(rule.get(k)) for k in ("tool", "command_prefix", "path_glob", "decision")
        )
        rule["id"] = hashlib.sha1(key.encode()).hexdigest()[:8]
    return rule
