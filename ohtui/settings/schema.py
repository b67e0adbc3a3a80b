"""Settings: the pydantic model of config.toml. One declaration drives defaults, validation,
the example file and the settings screen.

Every field is optional in the file: a missing key takes the default written here.
Secrets never live here; API keys and user secrets are in the OS keyring.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ohtui.sdk.conversation.stuck_detector import StuckDetectionThresholds
from ohtui.sdk.sandbox import DEFAULT_HIDDEN, SandboxConfig, SandboxMode
from ohtui.sdk.security.approval_rules import ApprovalRule
from ohtui.settings.choices import ConfirmationPolicy

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

    def config(self) -> SandboxConfig:
        """The engine's sandbox configuration."""
        return SandboxConfig(
            mode=self.mode,
            network=self.network,
            writable=tuple(self.writable),
            hidden=tuple(self.hidden),
        )


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


class StorageSettings(Section):
    """[storage]: where conversations are kept."""

    conversations_dir: Path | None = Field(
        default=None, description="Unset: the user data directory's 'conversations'."
    )

    @field_validator("conversations_dir")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None and str(value) else None


class ServerSettings(Section):
    """[server]: an agent server the conversations run on (unset: on this machine)."""

    url: str | None = Field(
        default=None,
        description="`ohtui serve`, or an OpenHands agent server, e.g. http://devbox:8000. "
        "Its session key: OHTUI_SERVER_API_KEY, or saved in the keyring.",
    )

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
    ui: UISettings = Field(default_factory=UISettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
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
