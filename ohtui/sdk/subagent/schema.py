"""AgentDefinition: a sub-agent described in a Markdown file (YAML frontmatter + prompt)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, Field, SerializeAsAny, field_validator

from ohtui.sdk.context.condenser.base import CondenserBase
from ohtui.sdk.hooks.config import HookConfig

if TYPE_CHECKING:
    from ohtui.sdk.security.confirmation_policy import ConfirmationPolicyBase

AgentDefinitionLevel = Literal["project", "user", "builtin", "plugin", "programmatic"]
"""Where a definition was found: set by discovery, never read from the file."""

KNOWN_FIELDS: Final[frozenset[str]] = frozenset(
    {
        "name",
        "description",
        "model",
        "color",
        "tools",
        "skills",
        "max_iteration_per_run",
        "max_budget_per_run",
        "hooks",
        "profile_store_dir",
        "mcp_config",
        "mcp_servers",
        "permission_mode",
        "condenser",
    }
)
"""Frontmatter keys with a meaning; any other key is kept in `metadata`."""

PERMISSION_MODES: Final[tuple[str, ...]] = ("always_confirm", "confirm_risky", "never_confirm")
_OFF_WORDS = frozenset({"none", "off", "false", "no", "disable", "disabled"})
_DEFAULT_WORDS = frozenset({"", "default", "inherit"})
_EXAMPLE = re.compile(r"<example>(.*?)</example>", re.DOTALL | re.IGNORECASE)


class AgentDefinitionError(ValueError):
    """An agent definition file that cannot be used, with where and why."""


class AgentDefinition(BaseModel):
    """A sub-agent: its name, when to use it, its tools and the prompt added to its own.

    Loaded from a Markdown file (`load`): the frontmatter gives the fields, the body the
    `system_prompt`, which is appended to the sub-agent's system prompt (not a replacement).
    """

    name: str = Field(description="The agent's name (the frontmatter's, else the file's stem).")
    description: str = Field(default="", description="What the agent is for.")
    model: str = Field(
        default="inherit", description="'inherit' (the parent's LLM) or another model's name."
    )
    color: str | None = Field(default=None, description="A display colour.")
    tools: list[str] = Field(default_factory=list, description="Registered tool names it gets.")
    skills: list[str] = Field(
        default_factory=list, description="Skill names, found in the project's and user's skills."
    )
    system_prompt: str = Field(default="", description="Added to the agent's system prompt.")
    source: str | None = Field(default=None, description="The file it was read from.")
    level: AgentDefinitionLevel | None = Field(
        default=None, description="Where discovery found it (None: loaded directly)."
    )
    when_to_use_examples: list[str] = Field(
        default_factory=list, description="The description's <example> texts."
    )
    hooks: HookConfig | None = Field(default=None, description="Hooks of its conversations.")
    permission_mode: str | None = Field(
        default=None,
        description="always_confirm, confirm_risky or never_confirm; None inherits the "
        "parent's policy.",
    )
    max_iteration_per_run: int | None = Field(
        default=None, gt=0, description="Steps per run (None: the parent's limit)."
    )
    max_budget_per_run: float | None = Field(
        default=None, gt=0, description="Dollars per run (None: the parent's budget)."
    )
    mcp_config: dict[str, Any] | None = Field(default=None, description="MCP servers by name.")
    profile_store_dir: str | None = Field(
        default=None, description="Where LLM profiles are looked up (kept for compatibility)."
    )
    condenser: SerializeAsAny[CondenserBase] | None = Field(
        default=None,
        description="Its condenser; None gives it a summarizing one, a NoOpCondenser none.",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Frontmatter keys with no meaning here, kept."
    )

    @field_validator("permission_mode")
    @classmethod
    def _known_mode(cls, value: str | None) -> str | None:
        if value is None:
            return None
        mode = value.strip().lower()
        if mode not in PERMISSION_MODES:
            raise ValueError(
                f"Invalid permission_mode '{value}': use one of {', '.join(PERMISSION_MODES)}"
            )
        return mode

    def get_confirmation_policy(self) -> ConfirmationPolicyBase | None:
        """The policy `permission_mode` names, or None to inherit the parent's."""
        from ohtui.sdk.security.confirmation_policy import AlwaysConfirm, ConfirmRisky, NeverConfirm

        policies = {
            "always_confirm": AlwaysConfirm,
            "confirm_risky": ConfirmRisky,
            "never_confirm": NeverConfirm,
        }
        if self.permission_mode is None:
            return None
        return policies[self.permission_mode]()

    @classmethod
    def load(cls, agent_path: Path) -> AgentDefinition:
        """Read an agent definition from a Markdown file.

        Raises AgentDefinitionError naming the file and the field when the file cannot be
        read or a field has a wrong value.
        """
        from ohtui.sdk.context.skills.skill import SkillError, split_frontmatter

        path = Path(agent_path)
        try:
            text = path.read_text(encoding="utf-8")
            front, body = split_frontmatter(text, path)
        except (OSError, UnicodeDecodeError, SkillError) as exc:
            raise AgentDefinitionError(f"{path}: cannot read the agent definition: {exc}") from exc
        try:
            return cls._from_frontmatter(front, body, path)
        except (ValueError, TypeError) as exc:
            raise AgentDefinitionError(f"{path}: {exc}") from exc

    @classmethod
    def _from_frontmatter(cls, fm: dict[str, Any], body: str, path: Path) -> AgentDefinition:
        description = str(fm.get("description") or "")
        return cls(
            name=str(fm.get("name") or path.stem),
            description=description,
            model=str(fm.get("model") or "inherit"),
            color=None if fm.get("color") is None else str(fm["color"]),
            tools=_names(fm.get("tools"), split_text=False),
            skills=_names(fm.get("skills"), split_text=True),
            permission_mode=None
            if fm.get("permission_mode") is None
            else str(fm["permission_mode"]),
            max_iteration_per_run=_number(fm, "max_iteration_per_run", int),
            max_budget_per_run=_number(fm, "max_budget_per_run", float),
            mcp_config=_mcp_config(fm),
            hooks=_hooks(fm.get("hooks")),
            profile_store_dir=_text_or_none(fm, "profile_store_dir"),
            condenser=_condenser(fm.get("condenser")),
            system_prompt=body.strip(),
            source=path.as_posix(),
            when_to_use_examples=_extract_examples(description),
            metadata={k: v for k, v in fm.items() if k not in KNOWN_FIELDS},
        )


def _extract_examples(description: str) -> list[str]:
    """The texts of the description's <example> tags (any case), in order."""
    return [m.strip() for m in _EXAMPLE.findall(description) if m.strip()]


def _names(raw: object, *, split_text: bool) -> list[str]:
    """One name or a list of names (`skills` may also be a comma-separated text)."""
    if raw is None:
        return []
    if isinstance(raw, str):
        if split_text:
            return [part.strip() for part in raw.split(",") if part.strip()]
        return [raw]
    if isinstance(raw, list):
        return [str(item) for item in raw]
    return []


def _number(fm: dict[str, Any], key: str, kind: type[int] | type[float]) -> Any:
    raw = fm.get(key)
    if raw is None or isinstance(raw, bool):
        return None
    try:
        return kind(raw)
    except (TypeError, ValueError):
        raise ValueError(f"'{key}' must be a number, not {raw!r}") from None


def _text_or_none(fm: dict[str, Any], key: str, any_scalar: bool = False) -> str | None:
    raw = fm.get(key)
    if raw is None:
        return None
    if any_scalar and isinstance(raw, str | int | float | bool):
        return str(raw)
    if not isinstance(raw, str):
        raise ValueError(f"'{key}' must be a text, not {type(raw).__name__}")
    return raw


def _hooks(raw: object) -> HookConfig | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"'hooks' must map hook events to their hooks, not {raw!r}")
    return HookConfig.model_validate(raw)


def _mcp_config(fm: dict[str, Any]) -> dict[str, Any] | None:
    """`mcp_config` (or the older `mcp_servers`): servers by name; `${VAR}` placeholders stay
    as they are, to be filled from the conversation's secrets when the servers start."""
    raw = fm.get("mcp_config", fm.get("mcp_servers"))
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(
            f"'mcp_config' must map server names to their settings, not a {type(raw).__name__}"
        )
    return dict(raw)


def _condenser(raw: object) -> CondenserBase | None:
    """None (a summarizing condenser is given), a NoOpCondenser ('none', false), or a
    condenser's settings."""
    from ohtui.sdk.context.condenser.no_op_condenser import NoOpCondenser

    if raw is None or isinstance(raw, CondenserBase):
        return raw
    if isinstance(raw, bool):
        return None if raw else NoOpCondenser()
    if isinstance(raw, str):
        word = raw.strip().lower()
        if word in _DEFAULT_WORDS:
            return None
        if word in _OFF_WORDS:
            return NoOpCondenser()
        raise ValueError(
            f"Invalid condenser value: {raw!r}; use 'default', 'none', or a condenser's settings"
        )
    if isinstance(raw, dict):
        return CondenserBase.model_validate(raw)
    raise ValueError(f"Invalid condenser value: {raw!r}")
