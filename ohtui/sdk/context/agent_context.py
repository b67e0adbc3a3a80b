"""AgentContext: instructions an agent adds to its system prompt and to each user message."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    SerializeAsAny,
    field_validator,
    model_validator,
)

from ohtui.sdk.context.skills.prompt import recall_knowledge, render_repo_context
from ohtui.sdk.context.skills.skill import DEFAULT_MARKETPLACE_PATH, Skill
from ohtui.sdk.llm.message import TextContent
from ohtui.sdk.secret.secrets import SecretSource, StaticSecret


class AgentContext(BaseModel):
    """Text the agent adds for the model: after its system prompt, after each user message."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    skills: list[Skill] = Field(
        default_factory=list,
        description="Skills: always-on ones join the system prompt, keyword ones are recalled.",
    )
    system_message_suffix: str | None = Field(
        default=None, description="Appended to the system prompt."
    )
    user_message_suffix: str | None = Field(
        default=None,
        description="Appended (for the model) to every user message sent to the conversation.",
    )
    load_project_skills: bool = Field(
        default=False,
        description="Add the workspace's skills (AGENTS.md, .agents/skills...) when a "
        "conversation starts; they win over skills of the same name.",
    )
    load_user_skills: bool = Field(
        default=False,
        description="Add the user's skills (from user_skills_dirs) when a conversation starts; "
        "every other skill of the same name wins over them.",
    )
    user_skills_dirs: list[str] | None = Field(
        default=None,
        description="Where the user's skills are (first wins); None: ~/.agents/skills and "
        "~/.openhands/skills.",
    )
    load_public_skills: bool = Field(
        default=False,
        description="Add the public skills (github.com/OpenHands/extensions, fetched into a "
        "cache) when the context is made; skills given here win a name. Offline, the cached "
        "copy is used, or none (a warning is logged).",
    )
    marketplace_path: str | None = Field(
        default=DEFAULT_MARKETPLACE_PATH,
        description="Which public skills: the marketplace file listing them, inside the "
        "repository (None: all of them).",
    )
    load_memory: bool = Field(
        default=False,
        description="Keep persistent memory: the MEMORY.md indexes under ~/.openhands/memory/ "
        "and <workspace>/.openhands/memory/ join the prompt when a conversation starts, and "
        "the prompt tells the agent how to keep them.",
    )
    memory_context: str | None = Field(
        default=None,
        exclude=True,
        description="The memory read when the conversation started (never saved: it is read "
        "again each time).",
    )

    @model_validator(mode="after")
    def _add_public_skills(self) -> AgentContext:
        if not self.load_public_skills:
            return self
        from ohtui.sdk.context.skills.public import load_public_skills

        given = {skill.name for skill in self.skills}
        public = load_public_skills(marketplace_path=self.marketplace_path)
        added = [skill for skill in public if skill.name not in given]
        if added:
            object.__setattr__(self, "skills", [*self.skills, *added])  # frozen: set once, here
        return self

    secrets: dict[str, SerializeAsAny[SecretSource]] | None = Field(
        default=None,
        description="Secrets a conversation starts with (values or sources; a value is kept "
        "as a StaticSecret): each goes into its secret registry unless the registry already "
        "has that name (a conversation's own `secrets` win). Saved like the registry's: "
        "redacted, or encrypted with the conversation's cipher.",
    )

    @field_validator("secrets", mode="before")
    @classmethod
    def _values_as_sources(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {
            name: StaticSecret(value=SecretStr(secret)) if isinstance(secret, str) else secret
            for name, secret in value.items()
        }

    def system_message_extension(self) -> str | None:
        """What follows the system prompt: the always-on skills, then the suffix."""
        parts = [render_repo_context(self.skills), (self.system_message_suffix or "").strip()]
        return "\n\n".join(p for p in parts if p) or None

    def user_message_extension(
        self, text: str = "", skip_skill_names: Iterable[str] = ()
    ) -> tuple[list[TextContent], list[str]]:
        """What to add to a user message of this `text`: the knowledge its keywords recall
        (skills not in `skip_skill_names`) and the suffix; and the names of the skills recalled.
        """
        knowledge, names = recall_knowledge(self.skills, text, skip_skill_names)
        suffix = (self.user_message_suffix or "").strip()
        extension = [knowledge] if knowledge is not None else []
        if suffix:
            extension.append(TextContent(text=suffix))
        return extension, names
